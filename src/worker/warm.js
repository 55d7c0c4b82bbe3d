// The stand-ins of the isolate's warm-up (src/worker/warm.rs declares them). A Worker's global
// scope may not build a Request or a Response with a body, nor do I/O: these are plain objects
// with just what head.js, body.js and d1.js read, and nothing of them outlives the warm-up.

// A request as head.js and body.js read it: method, URL, headers and a body stream.
export function standInRequest(method, url, headers, body) {
  const bytes = new TextEncoder().encode(body);
  return {
    method,
    url,
    headers: new Headers(JSON.parse(headers)),
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
  };
}

// A database as d1.js and the D1 adapter use one: every statement of a batch answers `row`, a
// statement alone answers it as raw() does.
export function standInDatabase(row) {
  const answer = JSON.parse(row);
  const statement = {
    bind: () => statement,
    raw: () => Promise.resolve([Object.values(answer)]),
  };
  return {
    prepare: () => statement,
    batch: (statements) => Promise.resolve(statements.map(() => ({ results: [answer] }))),
  };
}
