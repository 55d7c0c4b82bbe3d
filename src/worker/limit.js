// The rate limiter's one piece of JavaScript (src/worker/mod.rs, `count_failure`, declares it). It
// moves values only: the key and both answers are made in Rust (`auth::check::failure_key`,
// `auth::check::too_many_failures`).

let saidFailure = false;

// Counts one failure under `key` with the rate limiting binding `limiter`, and settles to
// `within` while the key is within its limit, else to `past`. A limiter that is missing or fails
// lets `within` through (the request is refused either way), said once per isolate in the log.
// Awaited here rather than in Rust: a future for it would cost the Worker about 1 KB of gzip.
export async function countFailure(limiter, key, within, past) {
  try {
    const { success } = await limiter.limit({ key });
    return success === false ? past : within;
  } catch {
    if (!saidFailure) {
      saidFailure = true;
      console.error("handoff-mcp: the rate limiter failed; wrong tokens are not limited until it works");
    }
    return within;
  }
}
