//! Plain HTTP on the server's ports: health probes and metrics
//! (`docs/contract.md#surfaces`, `#metrics`).
//!
//! `GET /healthz` says the server runs. `GET /readyz` says writes can
//! succeed: the project root and the journal can be written by this
//! process (a read-only mount, a volume owned by another user, answer 503
//! with why) — a server that answers but cannot write is not ready.
//! `GET /metrics` (with `--metrics`) is the Prometheus text, to a `Host`
//! that names this machine. A probe's head must arrive in its first
//! segment, as probes send it (kubelet, curl).

use tokio::net::{TcpListener, TcpStream};

use crate::Root;

/// Whether this process can write the root and the journal, or why not.
pub(crate) fn writable(root: &Root) -> Result<(), String> {
    use std::os::fd::AsFd;
    let can = |fd: std::os::fd::BorrowedFd<'_>| {
        rustix::fs::accessat(
            fd,
            ".",
            rustix::fs::Access::WRITE_OK,
            rustix::fs::AtFlags::EACCESS,
        )
    };
    can(root.dir().as_fd()).map_err(|e| {
        format!(
            "the root {} cannot be written ({})",
            root.path().display(),
            std::io::Error::from(e)
        )
    })?;
    if let Some(journal) = root.journal_dir() {
        journal.writable().map_err(|e| {
            format!(
                "the journal {} cannot be written ({e})",
                journal.path().display()
            )
        })?;
    }
    Ok(())
}

/// Answer probes (and metrics) on `listener` until the process ends: a
/// port of their own, so that the port that writes can stay on loopback.
pub async fn serve(listener: TcpListener, root: std::sync::Arc<Root>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let root = std::sync::Arc::clone(&root);
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let timeout = std::time::Duration::from_secs(10);
            match tokio::time::timeout(timeout, probe(&stream, &[])).await {
                Ok(Some((head, what))) => answer(&mut stream, head, what, &root).await,
                _ => {
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        .await;
                }
            }
        });
    }
}

/// The length of the request's head if the connection's first bytes are a
/// health probe: `GET /healthz` or `GET /readyz` over HTTP/1.x, with no
/// `Upgrade` header. Looked at without being read, so that anything else
/// reaches the WebSocket handshake whole.
///
/// `/metrics` is answered only to a request whose `Host` is an address or
/// `localhost` (what a scraper and a person at the machine send), or the
/// host of an origin the host allowed: a web page that made its own name
/// resolve to this address (DNS rebinding) sends its name, and is refused
/// (403), as the WebSocket handshake refuses its `Origin`.
pub(crate) async fn probe(stream: &TcpStream, allowed: &[String]) -> Option<(usize, Probe)> {
    let mut buf = [0u8; 2048];
    let n = stream.peek(&mut buf).await.ok()?;
    let head = &buf[..n];
    let end = head.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let text = std::str::from_utf8(&head[..end]).ok()?;
    let mut lines = text.split("\r\n");
    let mut request = lines.next()?.split(' ');
    let (method, target, version) = (request.next()?, request.next()?, request.next()?);
    let path = target.split('?').next()?;
    let what = match path {
        "/healthz" => Probe::Health,
        "/readyz" => Probe::Ready,
        "/metrics" if crate::metrics::enabled() => Probe::Metrics,
        _ => return None,
    };
    let is_probe =
        method == "GET" && matches!(version, "HTTP/1.0" | "HTTP/1.1") && request.next().is_none();
    let mut upgrade = false;
    let mut host = None;
    for (name, value) in lines.filter_map(|line| line.split_once(':')) {
        let name = name.trim();
        upgrade |= name.eq_ignore_ascii_case("upgrade");
        if name.eq_ignore_ascii_case("host") {
            host = Some(value.trim());
        }
    }
    let what = match what {
        Probe::Metrics if !host.is_some_and(|h| host_allowed(h, allowed)) => Probe::Forbidden,
        what => what,
    };
    (is_probe && !upgrade).then_some((end, what))
}

/// Whether a browser's `Origin` may reach the port: a loopback origin or
/// one the host allowed by name (`--ws-origin`). A page elsewhere must
/// not: browsers let any page send requests to loopback.
pub(crate) fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    is_loopback_origin(origin) || allowed.iter().any(|a| a == origin)
}

/// `http(s)://localhost`, `127.x.x.x` or `[::1]`, any port, parsed by
/// `url` as browsers send it: a scheme, a host and a port, nothing else.
pub(crate) fn is_loopback_origin(origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    let bare = url.username().is_empty()
        && url.password().is_none()
        && matches!(url.path(), "" | "/")
        && url.query().is_none()
        && url.fragment().is_none();
    if !bare || !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether a request's `Host` (`name[:port]`) is an IP address,
/// `localhost`, or the host of an allowed origin.
pub(crate) fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let Ok(url) = url::Url::parse(&format!("http://{host}/")) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => true,
        Some(url::Host::Domain(name)) => {
            name.eq_ignore_ascii_case("localhost")
                || allowed.iter().any(|origin| {
                    url::Url::parse(origin)
                        .ok()
                        .and_then(|o| o.host_str().map(|h| h.eq_ignore_ascii_case(name)))
                        .unwrap_or(false)
                })
        }
        None => false,
    }
}

/// What a plain HTTP request on the port asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    /// `/healthz`: the server runs.
    Health,
    /// `/readyz`: writes can succeed.
    Ready,
    /// `/metrics`, when the host turned them on.
    Metrics,
    /// `/metrics` under a name that is not this machine's.
    Forbidden,
}

/// Read the probe's head and answer it; the connection then closes.
pub(crate) async fn answer(stream: &mut TcpStream, head: usize, what: Probe, root: &Root) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = vec![0u8; head];
    if stream.read_exact(&mut request).await.is_err() {
        return;
    }
    let (status, kind, body) = match what {
        Probe::Health => ("200 OK", "text/plain; charset=utf-8", "ok\n".to_owned()),
        Probe::Ready => match writable(root) {
            Ok(()) => ("200 OK", "text/plain; charset=utf-8", "ok\n".to_owned()),
            Err(why) => (
                "503 Service Unavailable",
                "text/plain; charset=utf-8",
                format!("not ready: {why}\n"),
            ),
        },
        Probe::Metrics => (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            crate::metrics::render().unwrap_or_default(),
        ),
        Probe::Forbidden => (
            "403 Forbidden",
            "text/plain; charset=utf-8",
            "this host name is not allowed\n".to_owned(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    /// `/metrics` answers an address or localhost, and a name only when it
    /// is an allowed origin's: a rebinding page's name is refused.
    #[test]
    fn metrics_hosts() {
        let named = ["https://tool.example.com".to_owned()];
        for ok in [
            "127.0.0.1:8765",
            "10.1.2.3:8765",
            "[::1]:8765",
            "localhost",
            "LOCALHOST:80",
        ] {
            assert!(super::host_allowed(ok, &[]), "{ok}");
        }
        assert!(super::host_allowed("tool.example.com:8765", &named));
        for bad in ["evil.example.com:8765", "127.0.0.1.evil.com", "", "a b"] {
            assert!(!super::host_allowed(bad, &named), "{bad}");
        }
    }
}
