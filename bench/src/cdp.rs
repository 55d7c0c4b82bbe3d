//! A minimal Chrome DevTools Protocol client over a std-only WebSocket (RFC 6455), enough to
//! drive workerd's inspector: list its targets, open one session per isolate, call methods and
//! read their results. Text frames only, loopback only, every read bounded by a timeout. Must
//! not interpret what a method returns; profile.rs does that.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value as Json};

/// No inspector answer takes longer than this; a hung runtime fails the run instead of stalling it.
const TIMEOUT: Duration = Duration::from_secs(60);

/// An inspector target: one isolate of the runtime workerd.
#[derive(Debug, Clone)]
pub struct Target {
    /// workerd's id, e.g. `core:user:handoff-mcp` or `d1:db`.
    pub id: String,
    pub ws_path: String,
}

/// The targets an inspector lists at `http://127.0.0.1:<port>/json/list`; `None` when that port
/// is not an inspector.
pub fn list(port: u16) -> Option<Vec<Target>> {
    let body = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(3))
        .build()
        .get(&format!("http://127.0.0.1:{port}/json/list"))
        .call()
        .ok()?
        .into_string()
        .ok()?;
    let list: Vec<Json> = serde_json::from_str(&body).ok()?;
    let prefix = format!("ws://127.0.0.1:{port}");
    list.iter()
        .map(|t| {
            Some(Target {
                id: t["id"].as_str()?.to_owned(),
                ws_path: t["webSocketDebuggerUrl"]
                    .as_str()?
                    .strip_prefix(&prefix)?
                    .to_owned(),
            })
        })
        .collect()
}

/// Turns off the DevTools `Network` domain in every isolate the inspector at `port` serves, and
/// says how many. wrangler's inspector proxy turns it on in the Worker's isolate as it attaches,
/// so the runtime then sends an event for every request and subrequest, each D1 reply's body
/// among them, base64-encoded; wrangler's proxy buffers them all while no DevTools client is
/// attached and writes each to its debug log. None of that happens in production.
pub fn network_off(port: u16) -> Result<usize, String> {
    let targets = list(port).ok_or_else(|| format!("no inspector answers on port {port}"))?;
    for target in &targets {
        Session::open(port, &target.ws_path)?.call("Network.disable", json!({}))?;
    }
    Ok(targets.len())
}

/// One DevTools session on one target.
pub struct Session {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    next_id: u64,
}

impl Session {
    /// Opens the WebSocket. The inspectors check `Origin` (wrangler's proxy refuses none), so a
    /// loopback one is sent.
    pub fn open(port: u16, path: &str) -> Result<Session, String> {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .map_err(|e| format!("inspector {port}: {e}"))?;
        stream
            .set_read_timeout(Some(TIMEOUT))
            .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|e| e.to_string())?;
        let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
        write!(
            writer,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: aGFuZG9mZi1iZW5jaC1rZXk=\r\n\
             Sec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1\r\n\r\n"
        )
        .map_err(|e| e.to_string())?;
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader
            .read_line(&mut status)
            .map_err(|e| format!("inspector handshake: {e}"))?;
        if !status.contains(" 101 ") {
            return Err(format!(
                "inspector refused the WebSocket: {}",
                status.trim()
            ));
        }
        // The rest of the response head, up to the blank line.
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 || line == "\r\n" {
                break;
            }
        }
        Ok(Session {
            reader,
            writer,
            // Below the ids wrangler's inspector proxy gives its own calls (from 10^8) on the
            // session it shares with a client, whose replies it forwards to the client too; the
            // runtime's inspector does not answer an id above 2^31 with the same id.
            next_id: 0,
        })
    }

    /// Calls a method and returns its result, skipping the events that arrive meanwhile.
    pub fn call(&mut self, method: &str, params: Json) -> Result<Json, String> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.send(message.as_bytes())?;
        loop {
            let text = self.receive()?;
            let reply: Json = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            if reply["id"].as_u64() != Some(id) {
                continue;
            }
            if let Some(error) = reply.get("error") {
                return Err(format!("{method}: {error}"));
            }
            return Ok(reply["result"].clone());
        }
    }

    /// One masked text frame (a client must mask; the key need not be secret on loopback).
    fn send(&mut self, payload: &[u8]) -> Result<(), String> {
        let mask = [0x9e, 0x37, 0x79, 0xb9];
        let mut frame = vec![0x81];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.writer.write_all(&frame).map_err(|e| e.to_string())
    }

    /// The next whole text message, answering pings and joining fragments.
    fn receive(&mut self) -> Result<String, String> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.read(&mut head)?;
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let masked = head[1] & 0x80 != 0;
            let len = match head[1] & 0x7f {
                126 => {
                    let mut n = [0u8; 2];
                    self.read(&mut n)?;
                    u64::from(u16::from_be_bytes(n))
                }
                127 => {
                    let mut n = [0u8; 8];
                    self.read(&mut n)?;
                    u64::from_be_bytes(n)
                }
                n => u64::from(n),
            };
            let mut mask = [0u8; 4];
            if masked {
                self.read(&mut mask)?;
            }
            let len = usize::try_from(len).map_err(|_| "frame too large")?;
            let mut payload = vec![0u8; len];
            self.read(&mut payload)?;
            if masked {
                for (i, b) in payload.iter_mut().enumerate() {
                    *b ^= mask[i % 4];
                }
            }
            match opcode {
                0x8 => {
                    let code = payload.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
                    let reason = String::from_utf8_lossy(payload.get(2..).unwrap_or_default());
                    return Err(format!(
                        "the inspector closed the session ({}{reason})",
                        code.map(|c| format!("{c} ")).unwrap_or_default()
                    ));
                }
                0x9 => {
                    // A pong must echo the ping's payload.
                    let mut pong = vec![0x8a, 0x80 | payload.len().min(125) as u8, 0, 0, 0, 0];
                    pong.extend(payload.iter().take(125));
                    self.writer.write_all(&pong).map_err(|e| e.to_string())?;
                }
                0xa => {}
                _ => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).map_err(|e| e.to_string());
                    }
                }
            }
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<(), String> {
        self.reader
            .read_exact(buf)
            .map_err(|e| format!("inspector read: {e}"))
    }
}
