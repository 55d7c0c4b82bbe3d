//! Raw HTTP/1.1 over a TCP socket, for the two things ureq cannot do: send a body in chunks
//! without announcing its length (and read the answer before finishing it, or never finish it),
//! and open an event stream and then stop reading it. Nothing here knows JSON-RPC.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use crate::http::TIMEOUT;

/// The size of each chunk a body is sent in.
const CHUNK: usize = 64 * 1024;

/// A response read off the socket: status, headers (names lower-cased) and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The answer as a failure report quotes it.
    pub fn describe(&self) -> String {
        crate::checks::clip(&format!("HTTP {} {}", self.status, self.text()), 600)
    }
}

/// A connection to `origin` (`http://host:port`), every read and write bounded.
fn connect(origin: &str) -> Result<(TcpStream, String), String> {
    let host = origin
        .strip_prefix("http://")
        .ok_or_else(|| format!("not an http:// origin: {origin}"))?;
    let stream = TcpStream::connect(host).map_err(|e| format!("connect to {host}: {e}"))?;
    stream.set_read_timeout(Some(TIMEOUT)).ok();
    stream.set_write_timeout(Some(TIMEOUT)).ok();
    Ok((stream, host.to_owned()))
}

/// A request head; `chunked` announces a body sent in chunks, without a length.
fn head(method: &str, path: &str, host: &str, headers: &[(&str, &str)], chunked: bool) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if chunked {
        head.push_str("Transfer-Encoding: chunked\r\n");
    }
    head.push_str("\r\n");
    head
}

/// One chunk of a chunked body.
fn write_chunk(stream: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
    stream.write_all(bytes)?;
    stream.write_all(b"\r\n")
}

/// POSTs `body` in chunks, with no Content-Length, finishes it, and reads the answer.
pub fn post_chunked(
    origin: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Answer, String> {
    let (mut stream, host) = connect(origin)?;
    let sent = (|| {
        stream.write_all(head("POST", path, &host, headers, true).as_bytes())?;
        for chunk in body.chunks(CHUNK) {
            write_chunk(&mut stream, chunk)?;
        }
        stream.write_all(b"0\r\n\r\n")
    })();
    sent.map_err(|e| format!("sending the chunked body: {e}"))?;
    read_answer(&mut BufReader::new(stream), true)
}

/// The answer to a body past the limit that was still being sent, and how the rest went.
#[derive(Debug)]
pub struct Cut {
    /// Its body is read only if its length was announced.
    pub answer: Answer,
    /// Body bytes sent when the answer was read; the body was not finished then.
    pub sent: usize,
    /// Body bytes sent when the server stopped taking more (a write failed or timed out), or
    /// `None` if it took everything up to `at_most`.
    pub cut_off: Option<usize>,
}

/// POSTs a chunked body that starts with `prefix` and goes on with `filler` bytes: `first`
/// bytes of it, read the answer meanwhile, and without finishing it (no last chunk) takes that
/// answer, which a server that needed the whole body could not give. Then goes on sending, up to
/// `at_most` bytes in all, until the server stops taking it. The body is never finished.
pub fn post_unfinished(
    origin: &str,
    path: &str,
    headers: &[(&str, &str)],
    prefix: &[u8],
    filler: u8,
    first: usize,
    at_most: usize,
) -> Result<Cut, String> {
    let (mut stream, host) = connect(origin)?;
    // The answer is read while the body is still being sent, as a browser or a client with its
    // own reader would: a server that answers and then closes makes the kernel reset the
    // connection at the next bytes sent, and a reset throws away an answer not yet read.
    let reading = stream
        .try_clone()
        .map_err(|e| format!("cloning the socket: {e}"))?;
    let reader = std::thread::spawn(move || read_answer(&mut BufReader::new(reading), false));
    let fill = vec![filler; CHUNK];
    let mut sent = prefix.len();
    let began = (|| {
        stream.write_all(head("POST", path, &host, headers, true).as_bytes())?;
        write_chunk(&mut stream, prefix)?;
        while sent < first {
            write_chunk(&mut stream, &fill)?;
            sent += CHUNK;
        }
        Ok::<(), std::io::Error>(())
    })();
    let sent_then = sent;
    let read = reader
        .join()
        .unwrap_or_else(|_| Err("the reading thread panicked".into()));
    let answer = read.map_err(|e| {
        let began = began
            .err()
            .map(|e| format!(" (sending: {e})"))
            .unwrap_or_default();
        format!("no answer to an unfinished body of {sent_then} bytes: {e}{began}")
    })?;
    let mut cut_off = None;
    while sent < at_most {
        if write_chunk(&mut stream, &fill).is_err() {
            cut_off = Some(sent);
            break;
        }
        sent += CHUNK;
    }
    stream.shutdown(Shutdown::Both).ok();
    Ok(Cut {
        answer,
        sent: sent_then,
        cut_off,
    })
}

/// Reads one response: the head, then a body of the announced length, or (with `unannounced`)
/// one sent in chunks or up to the end. Behind wrangler dev's proxy, which rewrites HTML as a
/// stream, an HTML answer comes in chunks whose end may wait for the request's.
fn read_answer(reader: &mut impl BufRead, unannounced: bool) -> Result<Answer, String> {
    let status_line = line(reader)?;
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {status_line:?}"))?;
    let headers = read_headers(reader)?;
    let answer = Answer {
        status,
        headers,
        body: Vec::new(),
    };
    let body = if let Some(length) = answer.header("content-length") {
        let length: usize = length.trim().parse().map_err(|_| "bad Content-Length")?;
        let mut body = vec![0; length];
        reader
            .read_exact(&mut body)
            .map_err(|e| format!("reading the body: {e}"))?;
        body
    } else if !unannounced {
        Vec::new()
    } else if answer
        .header("transfer-encoding")
        .is_some_and(|te| te.eq_ignore_ascii_case("chunked"))
    {
        read_chunked(reader)?
    } else {
        let mut body = Vec::new();
        reader
            .read_to_end(&mut body)
            .map_err(|e| format!("reading the body: {e}"))?;
        body
    };
    Ok(Answer { body, ..answer })
}

fn read_headers(reader: &mut impl BufRead) -> Result<Vec<(String, String)>, String> {
    let mut headers = Vec::new();
    loop {
        let header = line(reader)?;
        if header.is_empty() {
            return Ok(headers);
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let chunk = read_chunk(reader)?;
        if chunk.is_empty() {
            line(reader)?;
            return Ok(body);
        }
        body.extend_from_slice(&chunk);
    }
}

/// One chunk of a chunked body; empty for the last (whose closing line is left unread).
fn read_chunk(reader: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let size = line(reader)?;
    let size = usize::from_str_radix(size.split(';').next().unwrap_or_default().trim(), 16)
        .map_err(|_| format!("bad chunk size {size:?}"))?;
    let mut chunk = vec![0; size];
    if size > 0 {
        reader
            .read_exact(&mut chunk)
            .map_err(|e| format!("reading a chunk: {e}"))?;
        line(reader)?;
    }
    Ok(chunk)
}

/// One line without its CR LF; the end of the stream is an error.
fn line(reader: &mut impl BufRead) -> Result<String, String> {
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) => Err("the connection closed".into()),
        Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_owned()),
        Err(e) => Err(format!("reading: {e}")),
    }
}

/// An event stream that was opened and is no longer read: the socket stays open, its data unread.
pub struct Unread {
    _stream: TcpStream,
    _reader: BufReader<TcpStream>,
}

/// GETs `path` as an event stream and reads until a `data:` line starting with `data_prefix`;
/// returns that line's data and the stream, which nothing reads from then on.
pub fn open_unread(
    origin: &str,
    path: &str,
    headers: &[(&str, &str)],
    data_prefix: &str,
) -> Result<(String, Unread), String> {
    let (mut stream, host) = connect(origin)?;
    let mut all = vec![("Accept", "text/event-stream")];
    all.extend_from_slice(headers);
    stream
        .write_all(head("GET", path, &host, &all, false).as_bytes())
        .map_err(|e| format!("sending GET {path}: {e}"))?;
    let mut reader = BufReader::new(
        stream
            .try_clone()
            .map_err(|e| format!("cloning the socket: {e}"))?,
    );
    let status = line(&mut reader)?;
    if !status.contains(" 200") {
        return Err(format!("GET {path}: {status}"));
    }
    let chunked = read_headers(&mut reader)?
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    // The stream as it comes, unchunked: an event may be split across chunks anywhere.
    let mut text = String::new();
    for _ in 0..64 {
        let piece = if chunked {
            read_chunk(&mut reader)?
        } else {
            let mut piece = vec![0; 4096];
            let n = reader
                .read(&mut piece)
                .map_err(|e| format!("reading: {e}"))?;
            piece.truncate(n);
            piece
        };
        if piece.is_empty() {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&piece));
        // Only whole events: those a blank line has ended.
        let events = text.rsplit_once("\n\n").map_or("", |(events, _)| events);
        let data = events
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .find(|data| data.starts_with(data_prefix));
        if let Some(data) = data {
            let data = data.to_owned();
            stream.set_read_timeout(Some(Duration::from_secs(600))).ok();
            let unread = Unread {
                _stream: stream,
                _reader: reader,
            };
            return Ok((data, unread));
        }
    }
    Err(format!("GET {path}: no data line starting {data_prefix:?}"))
}
