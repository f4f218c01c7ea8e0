//! Prometheus metrics of the servers' calls (`docs/contract.md#metrics`),
//! off unless the host turns them on (`serve --ws … --metrics`): calls by
//! surface, status and error code, bytes written, a latency histogram,
//! calls in flight, and calls stopped by the time limit. `serve --ws`
//! answers `GET /metrics` on its port with them in the OpenMetrics text
//! format, written by the `prometheus-client` crate.

use std::sync::OnceLock;
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use write_tool_wire::{Envelope, Status};

use crate::failure::TIMEOUT_MESSAGE;

/// A call's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    surface: &'static str,
    status: &'static str,
    /// The error code; empty unless `status` is `error`.
    code: String,
}

/// A server's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Surface {
    surface: &'static str,
}

/// Latency buckets: 0.5 ms doubling to about 16 s, W1's calls to the
/// default time limit.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// The metrics, once turned on.
struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    bytes: Family<Surface, Counter>,
    seconds: Family<Surface, Histogram, fn() -> Histogram>,
    in_flight: Family<Surface, Gauge>,
    waiting: Family<Surface, Gauge>,
    timeouts: Family<Surface, Counter>,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// Turn the metrics on for this process.
pub fn enable() {
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("write_tool");
        let calls = Family::<CallLabels, Counter>::default();
        let bytes = Family::<Surface, Counter>::default();
        let seconds =
            Family::<Surface, Histogram, fn() -> Histogram>::new_with_constructor(latency);
        let in_flight = Family::<Surface, Gauge>::default();
        let waiting = Family::<Surface, Gauge>::default();
        let timeouts = Family::<Surface, Counter>::default();
        registry.register(
            "calls",
            "Calls answered, by surface, status and error code",
            calls.clone(),
        );
        registry.register(
            "bytes_written",
            "Bytes written to files by applied calls",
            bytes.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "Time from a call's start to its answer",
            seconds.clone(),
        );
        registry.register(
            "calls_in_flight",
            "Calls started and not yet answered",
            in_flight.clone(),
        );
        registry.register(
            "calls_waiting",
            "Calls waiting for a slot (their caller's share, then one of the port's)",
            waiting.clone(),
        );
        registry.register(
            "timeouts",
            "Calls stopped by the time limit",
            timeouts.clone(),
        );
        Metrics {
            registry,
            calls,
            bytes,
            seconds,
            in_flight,
            waiting,
            timeouts,
        }
    });
}

/// Whether the metrics are on.
pub fn enabled() -> bool {
    METRICS.get().is_some()
}

/// A call in flight on `surface`, or waiting for a slot, counted until it
/// is dropped.
#[derive(Debug)]
pub struct InFlight(Option<(&'static str, bool)>);

impl InFlight {
    /// Count a call on `surface` as in flight (nothing when metrics are
    /// off).
    pub fn start(surface: &'static str) -> InFlight {
        InFlight::counted(surface, false)
    }

    /// Count a call on `surface` as waiting for a slot.
    pub fn waiting(surface: &'static str) -> InFlight {
        InFlight::counted(surface, true)
    }

    fn counted(surface: &'static str, waiting: bool) -> InFlight {
        InFlight(METRICS.get().map(|m| {
            m.gauge(waiting).get_or_create(&Surface { surface }).inc();
            (surface, waiting)
        }))
    }
}

impl Metrics {
    fn gauge(&self, waiting: bool) -> &Family<Surface, Gauge> {
        if waiting {
            &self.waiting
        } else {
            &self.in_flight
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let (Some((surface, waiting)), Some(m)) = (self.0, METRICS.get()) {
            m.gauge(waiting).get_or_create(&Surface { surface }).dec();
        }
    }
}

/// Count a call on `surface` answered with `envelope`, started at
/// `started`.
pub(crate) fn record(surface: &'static str, envelope: &Envelope, started: Instant) {
    let Some(m) = METRICS.get() else {
        return;
    };
    let status = match envelope.status {
        Status::Success => "success",
        Status::Partial => "partial",
        Status::Error => "error",
    };
    let code = envelope
        .error
        .as_ref()
        .map(|e| e.code.as_str().to_owned())
        .unwrap_or_default();
    m.calls
        .get_or_create(&CallLabels {
            surface,
            status,
            code,
        })
        .inc();
    let label = Surface { surface };
    m.bytes
        .get_or_create(&label)
        .inc_by(envelope.bytes_written());
    m.seconds
        .get_or_create(&label)
        .observe(started.elapsed().as_secs_f64());
    if envelope
        .error
        .as_ref()
        .is_some_and(|e| e.message.starts_with(TIMEOUT_MESSAGE))
    {
        m.timeouts.get_or_create(&label).inc();
    }
}

/// The metrics in the OpenMetrics text format; `None` when they are off.
pub fn render() -> Option<String> {
    let m = METRICS.get()?;
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &m.registry).ok()?;
    Some(text)
}
