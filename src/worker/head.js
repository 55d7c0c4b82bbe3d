// What the core reads of a request's head, handed to wasm in one crossing (src/worker/mod.rs,
// `RequestHead`, declares it): reading the method, the URL and each header across the boundary
// one at a time was a call, an allocation in wasm memory and a string copy each.

// The method, the URL and the value of each header in `names`, in that order, one per line,
// with "\0" for a header the request does not have. None of them can hold a line break or a
// NUL: the method is a token, a serialized URL has neither, and the Fetch standard forbids
// both in a header value. A repeated header comes joined with ", ", as `Headers.get` joins it.
export function requestHead(request, names) {
  const headers = request.headers;
  let head = request.method + "\n" + request.url;
  for (const name of names) {
    const value = headers.get(name);
    head += value === null ? "\n\0" : "\n" + value;
  }
  return head;
}
