// Validates Kubernetes manifests (a multi-document YAML file, or - for stdin) against the API
// schemas bundled with kubernetes-models (Kubernetes 1.36 and earlier API versions) and the
// Prometheus Operator's CRDs: types, enums and required fields of every object. Run from the
// directory install.sh filled (it resolves the packages there).
//   node k8s_validate.mjs FILE...
import { parseAllDocuments } from "yaml";
import { readFileSync } from "node:fs";

const CRDS = { "monitoring.coreos.com": "@kubernetes-models/prometheus-operator" };
let invalid = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file === "-" ? 0 : file, "utf8");
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) {
      console.log(`${file}: YAML error: ${doc.errors[0].message}`);
      invalid++;
      continue;
    }
    const object = doc.toJS();
    if (!object) continue;
    const [group, version] = object.apiVersion.includes("/")
      ? object.apiVersion.split("/") : ["", object.apiVersion];
    const module = CRDS[group] ? `${CRDS[group]}/${group}/${version}/${object.kind}`
      : `kubernetes-models/${group ? group + "/" : ""}${version}/${object.kind}`;
    const what = `${object.kind}/${object.metadata?.name}`;
    try {
      const models = await import(module);
      new models[object.kind](object).validate();
      console.log(`${what}: valid`);
    } catch (error) {
      console.log(`${what}: INVALID: ${error.message}`);
      invalid++;
    }
  }
}
process.exit(invalid ? 1 : 0);
