// What worker-build's bundle imports from `cloudflare:workers`: base classes only.
export class WorkerEntrypoint {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
export class DurableObject extends WorkerEntrypoint {}
