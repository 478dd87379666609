#!/usr/bin/python3
"""Checks the Grafana dashboard and the PromQL of it and of the Prometheus rules.

The dashboard JSON must follow grafana/dashboard.schema.json (Grafana's documented dashboard
model, unknown keys refused), with unique panel ids and panels that fit the 24-column grid
without overlapping.

Every query in deploy/grafana/kilnd-dashboard.json must parse (promtool check rules, on a rules
file holding each one as a recording rule), and every kiln_* metric or kiln:* recording rule a
query of the dashboard or of deploy/prometheus/kilnd_rules.yml names must exist: a metric kilnd
registers (service/metrics.cc, with a histogram's _bucket/_sum/_count series) or a rule the rules
file records. A renamed metric fails here, not on a blank panel in production.

usage: check_queries.py PROMTOOL
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\bkiln[_:][a-zA-Z0-9_:]*")


def without_grafana_variables(expr):
    """The query as Prometheus sees it once Grafana has substituted its variables: intervals
    become 5m, template variables (used in regex matchers) match anything."""
    expr = re.sub(r"\$__(rate_interval|interval|range)", "5m", expr)
    return re.sub(r"\$\{?[a-zA-Z_]+\}?", ".*", expr)


def main():
    promtool = sys.argv[1]
    dashboard = json.loads((ROOT / "deploy/grafana/kilnd-dashboard.json").read_text())
    queries = [(f"panel {panel['title']!r}", without_grafana_variables(target["expr"]))
               for panel in dashboard["panels"] for target in panel.get("targets", [])]
    # Template variables' queries (label_values(...)) are not PromQL: only their names count.
    variables = [(f"variable {v['name']!r}", v.get("definition", ""))
                 for v in dashboard["templating"]["list"] if v["type"] == "query"]
    rules = yaml.safe_load((ROOT / "deploy/prometheus/kilnd_rules.yml").read_text())
    recorded = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "record" in rule:
                recorded.add(rule["record"])
            queries.append((f"rule {rule.get('record') or rule.get('alert')}", rule["expr"]))
    source = (ROOT / "service/metrics.cc").read_text()
    exported = set()
    for name in re.findall(r'\.Name\("(kiln_[a-z0-9_]+)"\)', source):
        exported |= {name, f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    problems = []
    schema = json.loads((ROOT / "deploy/grafana/dashboard.schema.json").read_text())
    for error in jsonschema.Draft202012Validator(schema).iter_errors(dashboard):
        problems.append(f"dashboard: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    ids = [panel["id"] for panel in dashboard["panels"]]
    if len(ids) != len(set(ids)):
        problems.append(f"dashboard: panel ids repeat: {ids}")
    cells, overlaps = {}, set()
    for panel in dashboard["panels"]:
        box = panel["gridPos"]
        if box["x"] + box["w"] > 24:
            problems.append(f"dashboard: panel {panel['title']!r} is wider than the 24-column grid")
        for x in range(box["x"], box["x"] + box["w"]):
            for y in range(box["y"], box["y"] + box["h"]):
                if (x, y) in cells:
                    overlaps.add((cells[(x, y)], panel["title"]))
                cells[(x, y)] = panel["title"]
    problems += [f"dashboard: panels {a!r} and {b!r} overlap" for a, b in sorted(overlaps)]
    for where, expr in queries + variables:
        for name in NAME.findall(expr):
            if name not in exported and name not in recorded:
                problems.append(f"{where}: {name} is neither a kilnd metric nor a recorded rule")
    # Each dashboard query parses (as a recording rule).
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as file:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:query_{i}", "expr": expr}
            for i, (_, expr) in enumerate(q for q in queries if q[0].startswith("panel"))]}]},
            file)
        file.flush()
        checked = subprocess.run([promtool, "check", "rules", file.name], capture_output=True,
                                 text=True)
        if checked.returncode != 0:
            problems.append(f"a dashboard query does not parse:\n{checked.stdout}{checked.stderr}")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(queries)} queries checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
