// The request body's one piece of JavaScript (src/worker/mod.rs, `read_body`, declares it). It
// moves bytes only: whether a body is too large is decided in Rust (`http::too_large`), and so
// are both limits handed in here (`http::READ_CAP`, `http::DISCARD_CAP`).

// The first `cap` bytes of the request's body, or all of it if it is shorter, read from its
// stream with a running count, whether or not a Content-Length announced it: once `cap` bytes
// are in, nothing more is kept. The whole body in one crossing, as `arrayBuffer()` gave it,
// where a read per chunk from wasm would cost a promise each.
//
// A body cut short is answered at once (413), and what its client still sends is read and
// dropped, up to `discard` bytes, in `ctx.waitUntil` (without a `ctx`, not at all): a server that
// stops reading an upload makes the connection close under the client while it still writes,
// and a client that is still writing can lose the answer in that reset. Past `discard`, the
// stream is cancelled.
export async function readBody(request, cap, discard, ctx) {
  const body = request.body;
  if (body === null) {
    return new Uint8Array(0);
  }
  const reader = body.getReader();
  const chunks = [];
  let size = 0;
  while (size < cap) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  if (size >= cap) {
    // Nothing waits on either for the answer, which does not depend on them.
    const dropped = (ctx ? drop(reader, discard) : reader.cancel()).catch(() => {});
    if (ctx) {
      ctx.waitUntil(dropped);
    }
  }
  if (chunks.length === 1 && size <= cap) {
    return chunks[0];
  }
  const bytes = new Uint8Array(Math.min(size, cap));
  let at = 0;
  for (const chunk of chunks) {
    const take = Math.min(chunk.byteLength, bytes.length - at);
    bytes.set(take === chunk.byteLength ? chunk : chunk.subarray(0, take), at);
    at += take;
  }
  return bytes;
}

// Reads and forgets up to `limit` more bytes of a body; cancels it if it goes on past them.
async function drop(reader, limit) {
  let left = limit;
  while (left > 0) {
    const { done, value } = await reader.read();
    if (done) {
      return;
    }
    left -= value.byteLength;
  }
  await reader.cancel();
}
