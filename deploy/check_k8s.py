#!/usr/bin/python3
"""Checks deploy/k8s: builds the base and the example overlay with kustomize (kubectl
kustomize), validates every object against the Kubernetes API schemas (tools/k8s_validate.mjs),
then checks what the schemas cannot: the pieces agree with each other and with kilnd's flags.

- terminationGracePeriodSeconds exceeds kilnd's --grace-period plus the preStop pause;
- CPU is one core per worker; the memory limit covers workers x --max-compile-bytes;
- the probes are gRPC probes on kilnd's port (readiness on the kiln.v1.Compiler service);
- Services, the PodDisruptionBudget, the NetworkPolicy select kilnd's pods, the headless
  Service has no cluster IP, the HPA scales the Deployment, the ServiceMonitor finds a Service
  with a `metrics` port, and kilnd may reach the Redis its flags name.

usage: check_k8s.py TOOLS_DIR
"""
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"


def build(tools, directory):
    return subprocess.run([str(tools / "kubectl" / "kubectl"), "kustomize", str(directory)],
                          capture_output=True, text=True, check=True).stdout


def seconds(text):
    match = re.fullmatch(r"(\d+)(s|m)", text)
    return int(match.group(1)) * (60 if match.group(2) == "m" else 1)


def quantity(text):
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)?", str(text))
    return int(match.group(1)) * units.get(match.group(2), 1)


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def check(objects):
    problems = []
    by_kind = {}
    for o in objects:
        by_kind.setdefault(o["kind"], {})[o["metadata"]["name"]] = o
    flags = by_kind["ConfigMap"]["kilnd-config"]["data"]
    kilnd = by_kind["Deployment"]["kilnd"]
    pod = kilnd["spec"]["template"]
    labels = pod["metadata"]["labels"]
    container = pod["spec"]["containers"][0]
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    pause = int(pre_stop[-1]) if pre_stop[0].endswith("sleep") else 0
    grace = seconds(flags["KILN_GRACE_PERIOD"])
    if pod["spec"]["terminationGracePeriodSeconds"] <= grace + pause:
        problems.append(f"terminationGracePeriodSeconds {pod['spec']['terminationGracePeriodSeconds']}"
                        f" does not exceed --grace-period {grace}s + preStop {pause}s")
    workers = int(flags["KILN_WORKERS"])
    resources = container["resources"]
    if quantity(resources["requests"]["cpu"]) != workers:
        problems.append(f"cpu request {resources['requests']['cpu']} is not one core per worker ({workers})")
    need = workers * int(flags["KILN_MAX_COMPILE_BYTES"])
    if quantity(resources["limits"]["memory"]) <= need:
        problems.append(f"memory limit {resources['limits']['memory']} does not cover {workers} "
                        f"workers x {flags['KILN_MAX_COMPILE_BYTES']} bytes")
    grpc_port = next(p["containerPort"] for p in container["ports"] if p["name"] == "grpc")
    for probe in ("readinessProbe", "livenessProbe"):
        if container[probe].get("grpc", {}).get("port") != grpc_port:
            problems.append(f"{probe} is not a gRPC probe on port {grpc_port}")
    if container["readinessProbe"]["grpc"].get("service") != "kiln.v1.Compiler":
        problems.append("readiness does not ask for the kiln.v1.Compiler service")
    for name, service in by_kind["Service"].items():
        if name.startswith("kilnd") and not selects(service["spec"]["selector"], labels):
            problems.append(f"Service {name} does not select kilnd's pods")
    if by_kind["Service"]["kilnd-headless"]["spec"].get("clusterIP") != "None":
        problems.append("Service kilnd-headless is not headless (clusterIP: None)")
    pdb = by_kind["PodDisruptionBudget"]["kilnd"]
    if not selects(pdb["spec"]["selector"]["matchLabels"], labels):
        problems.append("the PodDisruptionBudget does not select kilnd's pods")
    hpa = by_kind["HorizontalPodAutoscaler"]["kilnd"]["spec"]
    if hpa["scaleTargetRef"]["name"] != "kilnd" or hpa["minReplicas"] < 2:
        problems.append("the HPA does not scale the kilnd Deployment from at least 2 replicas")
    monitor = by_kind["ServiceMonitor"]["kilnd"]["spec"]
    if not any(selects(monitor["selector"]["matchLabels"], s["metadata"].get("labels", {}))
               and any(p["name"] == "metrics" for p in s["spec"]["ports"])
               for s in by_kind["Service"].values()):
        problems.append("the ServiceMonitor finds no Service with a metrics port")
    policy = by_kind["NetworkPolicy"]["kilnd"]["spec"]
    if not selects(policy["podSelector"]["matchLabels"], labels):
        problems.append("the NetworkPolicy does not select kilnd's pods")
    ingress_ports = {p["port"] for rule in policy["ingress"] for p in rule["ports"]}
    if grpc_port not in ingress_ports:
        problems.append(f"the NetworkPolicy admits nothing on port {grpc_port}")
    redis_host, redis_port = flags["KILN_CACHE_REDIS"].rsplit(":", 1)
    redis = by_kind.get("Service", {}).get(redis_host)
    if redis is not None:
        egress = [rule for rule in policy["egress"]
                  if any(p["port"] == int(redis_port) for p in rule["ports"])]
        if not any(selects(peer.get("podSelector", {}).get("matchLabels", {}),
                           redis["spec"]["selector"]) for rule in egress for peer in rule["to"]):
            problems.append(f"the NetworkPolicy does not let kilnd reach Redis at {redis_host}:{redis_port}")
    return problems


def main():
    tools = Path(sys.argv[1])
    problems = []
    for directory in (K8S / "base", K8S / "overlays" / "example"):
        manifests = build(tools, directory)
        validated = subprocess.run(["node", str(tools / "k8s_validate.mjs"), "-"], input=manifests,
                                   capture_output=True, text=True)
        if validated.returncode != 0:
            problems.append(f"{directory.name}: schema validation failed:\n{validated.stdout}")
        print(validated.stdout, end="")
    example = [o for o in yaml.safe_load_all(build(tools, K8S / "overlays" / "example")) if o]
    problems += check(example)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(example)} objects in the example overlay, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
