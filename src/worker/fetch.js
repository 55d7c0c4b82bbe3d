// The client metadata document's one piece of JavaScript (src/worker/mod.rs, `fetch_document`,
// declares it). It moves bytes only: which URL may be fetched and what the document must say
// are decided in Rust (`oauth::document_url`, `oauth::client`), and so are the limits handed in.

// Fetches `url` with no redirect followed, giving up after `timeoutMs`, and reads at most `cap`
// bytes of its body: "<status>\n<cache-control>\n<body>" as text, or "!<why>" when there is no
// usable answer: "!redirect", "!large" (a body past `cap`), "!slow" (a time-out) or
// "!unreachable".
export async function fetchDocument(url, cap, timeoutMs) {
  let response;
  try {
    response = await fetch(url, {
      redirect: "manual",
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    return error && error.name === "TimeoutError" ? "!slow" : "!unreachable";
  }
  if (response.status >= 300 && response.status < 400) {
    return "!redirect";
  }
  const cacheControl = (response.headers.get("cache-control") || "").replace(/\n/g, " ");
  const chunks = [];
  let size = 0;
  try {
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          break;
        }
        size += value.byteLength;
        if (size > cap) {
          reader.cancel().catch(() => {});
          return "!large";
        }
        chunks.push(value);
      }
    }
  } catch {
    return "!slow";
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return response.status + "\n" + cacheControl + "\n" + new TextDecoder().decode(bytes);
}
