// Does code compiled in a Worker's global scope serve its first request? (docs/benchmarks.md,
// "Where it stands (issue 35)"). Five probe Workers, each started fresh in the local runtime
// with no inspector (wrangler's own startWorker API), and the runtime workerd processes' CPU
// (/proc schedstat, every thread) around the first and the second request:
//   wasm-warm   a 2.4 MB wasm module of 200 large functions, run once in the global scope and
//               again by each request;
//   wasm-cold   the same, run by each request only;
//   wasm-idle   the same module instantiated, never run (what a first request costs without it);
//   wasm-hot    run 1,500 times in the global scope, enough for V8 to tier every function up
//               from Liftoff to TurboFan, and again by each request;
//   js-warm     one 3 MB JavaScript function, called in the global scope and by each request;
//   js-cold     the same, called by each request only.
// If code compiled in the global scope served the first request, each *-warm would cost about
// what the second request costs; wasm-hot tells Liftoff's code from TurboFan's.
//
//   node bench/node/startup-probe.mjs WRANGLER_CLI_JS [ROUNDS]
//
// WRANGLER_CLI_JS is wrangler-dist/cli.js of the pinned wrangler (scripts/coldstart passes it).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [cli, rounds = "3"] = process.argv.slice(2);
const { unstable_startWorker } = await import(cli);
const root = mkdtempSync(join(tmpdir(), "handoff-startup-probe-"));

function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
// 200 functions (i32) -> i32 of 2,000 multiply-adds each, and `run`, which calls them all.
function probeWasm() {
  const count = 200;
  const bodies = [];
  for (let k = 0; k < count; k++) {
    const code = [0x20, 0x00];
    for (let i = 0; i < 2000; i++) code.push(0x41, ...leb((i * 7 + k) % 100), 0x6a, 0x41, 0x03, 0x6c);
    code.push(0x0b);
    const body = [0x00, ...code];
    bodies.push(...leb(body.length), ...body);
  }
  const run = [0x00, 0x20, 0x00];
  for (let i = 0; i < count; i++) run.push(0x10, ...leb(i));
  run.push(0x0b);
  bodies.push(...leb(run.length), ...run);
  const types = [1, 0x60, 1, 0x7f, 1, 0x7f];
  const funcs = [...leb(count + 1), ...new Array(count + 1).fill(0)];
  const exports = [1, 3, ...Buffer.from("run"), 0x00, ...leb(count)];
  const code = [...leb(count + 1), ...bodies];
  return Buffer.from([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...section(1, types), ...section(3, funcs),
    ...section(7, exports), ...section(10, code)]);
}

const bigFunction = (() => {
  const lines = [];
  for (let i = 0; i < 60000; i++) lines.push(`  x = (x * 31 + ${i}) | 0; if (x === ${i * 7}) y++;`);
  return `function big(a) {\n  let x = a, y = 0;\n${lines.join("\n")}\n  return x + y;\n}\n`;
})();
const wasm = probeWasm();
const probes = {
  "wasm-warm": `import m from "./probe.wasm";\nconst run = new WebAssembly.Instance(m, {}).exports.run;\nrun(1);\nexport default { fetch() { return new Response(String(run(2))); } };\n`,
  "wasm-cold": `import m from "./probe.wasm";\nconst run = new WebAssembly.Instance(m, {}).exports.run;\nexport default { fetch() { return new Response(String(run(2))); } };\n`,
  "wasm-hot": `import m from "./probe.wasm";\nconst run = new WebAssembly.Instance(m, {}).exports.run;\nfor (let i = 0; i < 1500; i++) run(i);\nexport default { fetch() { return new Response(String(run(2))); } };\n`,
  "wasm-idle": `import m from "./probe.wasm";\nconst run = new WebAssembly.Instance(m, {}).exports.run;\nexport default { fetch() { return new Response(typeof run); } };\n`,
  "js-warm": `${bigFunction}big(1);\nexport default { fetch() { return new Response(String(big(2))); } };\n`,
  "js-cold": `${bigFunction}export default { fetch() { return new Response(String(big(2))); } };\n`,
};

function workerdCpuNs() {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "workerd") continue;
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      }
    } catch {
      // A process or thread that ended meanwhile.
    }
  }
  return total;
}

async function once(name) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.js"), probes[name]);
  writeFileSync(join(dir, "probe.wasm"), wasm);
  writeFileSync(join(dir, "wrangler.toml"), `name = "probe-${name}"\nmain = "index.js"\ncompatibility_date = "2026-11-17"\n`);
  const worker = await unstable_startWorker({
    config: join(dir, "wrangler.toml"),
    dev: { inspector: false, server: { hostname: "127.0.0.1", port: 0 }, logLevel: "warn" },
  });
  await worker.ready;
  await new Promise((r) => setTimeout(r, 1500));
  const cpu = [];
  for (let i = 0; i < 2; i++) {
    const before = workerdCpuNs();
    await (await worker.fetch("http://probe/")).text();
    cpu.push((workerdCpuNs() - before) / 1e6);
  }
  await worker.dispose();
  return cpu;
}

const results = Object.fromEntries(Object.keys(probes).map((name) => [name, []]));
for (let round = 0; round < Number(rounds); round++) {
  for (const name of Object.keys(probes)) results[name].push(await once(name));
}
rmSync(root, { recursive: true, force: true });
const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];
const range = (values) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
console.log(`| probe (${rounds} fresh starts each) | first request, runtime CPU ms | second request |`);
console.log("| --- | --- | --- |");
for (const [name, runs] of Object.entries(results)) {
  const first = runs.map((r) => r[0]);
  const second = runs.map((r) => r[1]);
  console.log(`| ${name} | ${median(first).toFixed(1)} (${range(first)}) | ${median(second).toFixed(1)} (${range(second)}) |`);
}
process.exit(0);
