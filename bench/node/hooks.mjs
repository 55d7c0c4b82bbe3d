// Module hooks that load worker-build's bundle in Node as workerd loads it: `cloudflare:workers`
// from a stand-in, and a `.wasm` import as a compiled `WebAssembly.Module` (not Node's own
// wasm-module integration, which would instantiate it).
export async function resolve(specifier, context, next) {
  if (specifier === "cloudflare:workers") {
    return { url: new URL("./cloudflare-workers.mjs", import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.endsWith(".wasm")) {
    const path = JSON.stringify(new URL(url).pathname);
    const source = `import { readFileSync } from "node:fs";
export default new WebAssembly.Module(readFileSync(${path}));`;
    return { format: "module", shortCircuit: true, source };
  }
  return next(url, context);
}
