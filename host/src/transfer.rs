//! Bounds on the bytes of a plain HTTP request of the port, beside hyper's
//! own bound on a request's head (`docs/contract.md#mcp-http`): a body
//! must arrive in full within the port's transfer time, and an answer
//! whose writes make no progress for as long is given up with its
//! connection. Either would otherwise hold a connection slot, and a drain,
//! for as long as a client cares to trickle or not to read.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A request body that did not arrive within its time.
#[derive(Debug)]
pub(crate) struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request's body did not arrive in time")
    }
}

impl std::error::Error for BodyTimedOut {}

/// Whether `error` (a body's, as `Limited` passes it on) is that the
/// body came too slowly.
pub(crate) fn timed_out(error: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    error.is::<BodyTimedOut>()
}

/// A body that fails with [`BodyTimedOut`] once its time is up: one
/// deadline for the whole body, so that a client sending a byte now and
/// then cannot stretch it.
pub(crate) struct Deadline<B> {
    body: B,
    deadline: Pin<Box<Sleep>>,
    /// Set once the deadline failed the body: for a reader (rmcp's) that
    /// turns a body's error into an answer of its own.
    fired: Arc<AtomicBool>,
}

impl<B> Deadline<B> {
    pub(crate) fn new(body: B, within: Duration) -> Deadline<B> {
        Deadline {
            body,
            deadline: Box::pin(tokio::time::sleep(within)),
            fired: Arc::default(),
        }
    }

    /// Whether the deadline failed the body, to be asked once it is read.
    pub(crate) fn fired(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.fired)
    }
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        ready!(self.deadline.as_mut().poll(cx));
        self.fired.store(true, Ordering::SeqCst);
        Poll::Ready(Some(Err(Box::new(BodyTimedOut))))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection whose writes fail once one has made no progress for
/// `within`: an answer nobody reads ends the connection instead of
/// holding it. A reader that reads, however slowly, resets the time.
pub(crate) struct Stalls<T> {
    io: T,
    within: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> Stalls<T> {
    pub(crate) fn new(io: T, within: Duration) -> Stalls<T> {
        Stalls {
            io,
            within,
            stalled: None,
        }
    }

    /// `poll`'s outcome, with the stall time started at its first
    /// `Pending` and the write failed once it is up.
    fn bounded<R>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnOnce(Pin<&mut T>, &mut Context<'_>) -> Poll<std::io::Result<R>>,
    ) -> Poll<std::io::Result<R>>
    where
        T: Unpin,
    {
        match poll(Pin::new(&mut self.io), cx) {
            Poll::Ready(done) => {
                self.stalled = None;
                Poll::Ready(done)
            }
            Poll::Pending => {
                let within = self.within;
                let stalled = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(within)));
                ready!(stalled.as_mut().poll(cx));
                Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the client did not read its answer in time",
                )))
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Stalls<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Stalls<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.bounded(cx, |io, cx| io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.bounded(cx, |io, cx| io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.bounded(cx, AsyncWrite::poll_flush)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.bounded(cx, AsyncWrite::poll_shutdown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;
    use http_body_util::BodyExt as _;
    use tokio::io::AsyncWriteExt as _;

    /// A test that fails, not hangs, when a bound never fires.
    async fn bounded<T>(what: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(10), what)
            .await
            .expect("the bound fired")
    }

    /// A body that never ends fails at its deadline, and says why; so
    /// does one that keeps sending, a frame at a time, past it (one
    /// deadline for the body, not a time between frames); one that has
    /// ended is read whole.
    #[tokio::test]
    async fn a_body_has_one_deadline() {
        let first = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(Frame::data(
            Bytes::from_static(b"a"),
        ))]);
        let body = http_body_util::StreamBody::new(first.chain(futures_util::stream::pending()));
        let body = Deadline::new(body, Duration::from_millis(200));
        let fired = body.fired();
        let error = bounded(body.collect()).await.expect_err("timed out");
        assert!(fired.load(Ordering::SeqCst));
        assert!(timed_out(&*error), "{error}");
        // A frame every 100 ms for 3 s, against a deadline of 1 s.
        let trickle = futures_util::stream::iter(0..30).then(|_| async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from_static(b"a")))
        });
        let body = Deadline::new(
            http_body_util::StreamBody::new(Box::pin(trickle)),
            Duration::from_secs(1),
        );
        let error = bounded(body.collect()).await.expect_err("timed out");
        assert!(timed_out(&*error), "{error}");
        let whole = Deadline::new(
            http_body_util::Full::new(Bytes::from_static(b"ab")),
            Duration::from_millis(200),
        );
        assert_eq!(
            bounded(whole.collect()).await.expect("read").to_bytes(),
            "ab"
        );
    }

    /// A write that makes no progress fails after the stall time; one
    /// that makes progress, however slowly, does not: a reader taking a
    /// byte every 100 ms keeps a one-byte pipe's writer going for 2 s
    /// against a stall time of 1 s.
    #[tokio::test]
    async fn a_write_nobody_reads_fails_in_time() {
        let (near, mut far) = tokio::io::duplex(16);
        let mut near = Stalls::new(near, Duration::from_millis(200));
        near.write_all(&[0; 16]).await.expect("the buffer takes it");
        let error = bounded(near.write_all(&[0; 1])).await.expect_err("stalled");
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        let mut got = [0; 16];
        tokio::io::AsyncReadExt::read_exact(&mut far, &mut got)
            .await
            .expect("read");

        let (near, mut far) = tokio::io::duplex(1);
        let mut near = Stalls::new(near, Duration::from_secs(1));
        let reader = tokio::spawn(async move {
            let mut byte = [0; 1];
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                tokio::io::AsyncReadExt::read_exact(&mut far, &mut byte)
                    .await
                    .expect("read");
            }
        });
        bounded(near.write_all(&[1; 20]))
            .await
            .expect("slow progress is progress");
        reader.await.expect("the reader");
    }
}
