//! iperf3: network throughput between a client and a server (`tool = "iperf3"`).
//!
//! The run starts `iperf3 -s -p PORT` as its server, then the timed client `iperf3 -c
//! {server} -p PORT -J -t {time}`, and reads the client's JSON report (`-J`) from stdout.
//!
//! The server is not `-1` (one-off): the exec kind waits until the port accepts a
//! connection, and that probe (connect, close) is the one client a one-off server serves —
//! it exits before the real client comes (tried: the client then gets "Connection refused").
//! A server that stays up logs "unable to receive parameters from client" for the probe and
//! goes on listening; the exec kind ends it after the client.
//!
//! iperf3 exits 0 when it could not connect, or when the server vanished mid-test, and says
//! so only in the JSON's `error` (esnet/iperf#1405): the parser checks that key before any
//! number.

use std::borrow::Cow;

use iolab_metrics::{Better, MetricDef};
use serde_json::Value;

use crate::adapter::{
    self, expand_args, Adapter, Claimed, Command, Invalid, Invocation, Key, Network, OptError,
    Opts, Parsed, Placeholders, Raw, Server, ToolRun,
};

/// iperf3's adapter.
pub struct Iperf3;

/// iperf3's own default port (5201) plus 100: iolab's client must never reach a server
/// somebody else left on the default port (the readiness check would pass and the run would
/// measure against that server).
pub const DEFAULT_PORT: u16 = 5301;

/// `-t` when the experiment sets no `time`: shorter than iperf3's own 10 s, as repetitions
/// do the averaging.
pub const DEFAULT_TIME_S: u64 = 5;

/// iperf3 refuses more (`number of parallel streams too large (maximum = 128)`).
const MAX_STREAMS: u64 = 128;

static KEYS: &[Key] = &[
    Key {
        name: "network",
        doc: "where the server runs: \"loopback\" (default, on 127.0.0.1) or \"namespaces\" (a network namespace of its own, joined by a veth pair)",
    },
    Key {
        name: "protocol",
        doc: "\"tcp\" (default) or \"udp\" (`-u`)",
    },
    Key {
        name: "streams",
        doc: "parallel client streams, 1 to 128 (`-P`; default 1)",
    },
    Key {
        name: "bitrate",
        doc: "target bit rate, bits/s as a number or iperf3's text (\"100M\", \"1G\"; `-b`); UDP's default is 1 Mbit/s, TCP's unlimited",
    },
    Key {
        name: "reverse",
        doc: "true: the server sends and the client receives (`-R`)",
    },
    Key {
        name: "port",
        doc: "the server's TCP port (`-p`; default 5301, away from iperf3's 5201)",
    },
    Key {
        name: "length",
        doc: "buffer length of each read/write, bytes or \"128K\" (`-l`; iperf3's default: 128 KiB for TCP, the path's MTU for UDP)",
    },
];

static METRICS: &[MetricDef] = &[
    MetricDef::new(
        "sent_bits_per_s",
        "bit/s",
        Some(Better::Higher),
        "Sent",
        "bits the sender wrote per second, all streams (iperf3's end.sum_sent.bits_per_second)",
    )
    .headline(),
    MetricDef::new(
        "received_bits_per_s",
        "bit/s",
        Some(Better::Higher),
        "Received",
        "bits the receiver read per second, all streams (iperf3's end.sum_received.bits_per_second)",
    )
    .headline(),
    MetricDef::new(
        "retransmits",
        "",
        Some(Better::Lower),
        "TCP retransmits",
        "TCP segments the sender retransmitted during the test (iperf3's end.sum_sent.retransmits; TCP on Linux only)",
    ),
    MetricDef::new(
        "cpu_host_pct",
        "%",
        None,
        "Client CPU",
        "CPU time of the iperf3 client over the test's duration, user and system (iperf3's cpu_utilization_percent.host_total)",
    ),
    MetricDef::new(
        "cpu_remote_pct",
        "%",
        None,
        "Server CPU",
        "CPU time of the iperf3 server over the test's duration, as the server reported it (cpu_utilization_percent.remote_total)",
    ),
    MetricDef::new(
        "jitter_ns",
        "ns",
        Some(Better::Lower),
        "UDP jitter",
        "the receiver's smoothed variation of the datagrams' transit time (iperf3's end.sum.jitter_ms, in ns; UDP only)",
    ),
    MetricDef::new(
        "lost_pct",
        "%",
        Some(Better::Lower),
        "UDP datagrams lost",
        "datagrams the receiver never got, in percent of those sent (iperf3's end.sum.lost_percent; UDP only)",
    ),
];

impl Adapter for Iperf3 {
    fn name(&self) -> &'static str {
        "iperf3"
    }

    fn program(&self) -> &'static str {
        "iperf3"
    }

    fn install(&self) -> &'static str {
        "apt-get install iperf3"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn parser_version(&self) -> u32 {
        1
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn configure(&self, opts: &Opts) -> Result<Box<dyn ToolRun>, OptError> {
        let network = match opts.choice("network", &["loopback", "namespaces"])? {
            Some("namespaces") => Network::NamespacePair,
            _ => Network::Loopback,
        };
        let udp = opts.choice("protocol", &["tcp", "udp"])? == Some("udp");
        let port = match opts.uint("port", 1, u16::MAX.into())? {
            // In range by the check above.
            Some(p) => u16::try_from(p).unwrap_or(DEFAULT_PORT),
            None => DEFAULT_PORT,
        };
        Ok(Box::new(Iperf3Run {
            network,
            udp,
            streams: opts.uint("streams", 1, MAX_STREAMS)?,
            // iperf3 reads "banana" as 0 without a word.
            bitrate: opts.quantity(
                "bitrate",
                false,
                true,
                "a number of bits/s (0: unlimited), or one with K, M, G or T (\"100M\")",
            )?,
            reverse: opts.flag("reverse")?.unwrap_or(false),
            port,
            length: opts.quantity(
                "length",
                false,
                false,
                "a number of bytes above 0, or one with K, M or G (\"128K\")",
            )?,
            args: opts.checked_args(true)?,
        }))
    }
}

/// A configured iperf3 run.
#[derive(Debug)]
struct Iperf3Run {
    network: Network,
    udp: bool,
    streams: Option<u64>,
    bitrate: Option<String>,
    reverse: bool,
    port: u16,
    length: Option<String>,
    args: Vec<String>,
}

/// iperf3's options that end a test other than by time: with one in `args`, iolab passes no
/// `-t` (iperf3 refuses two end conditions).
const END_CONDITIONS: &[&str] = &["-n", "--bytes", "-k", "--blockcount"];

impl ToolRun for Iperf3Run {
    /// iperf3 counts no operations: its rate is bits per second.
    fn stop_metric(&self) -> Option<&str> {
        Some("received_bits_per_s")
    }

    fn invocation(&self, at: &Placeholders) -> Invocation {
        let port = self.port.to_string();
        let server = at.server.clone().unwrap_or_else(|| "127.0.0.1".into());
        let args = expand_args(&self.args, at);
        let mut main = vec![
            Iperf3.program().to_string(),
            "-c".into(),
            server,
            "-p".into(),
            port.clone(),
            "-J".into(),
        ];
        let ends_itself = args.iter().any(|a| {
            END_CONDITIONS
                .iter()
                .any(|e| a == e || a.starts_with(&format!("{e}=")))
        });
        if !ends_itself {
            main.extend(["-t".into(), at.time_s.unwrap_or(DEFAULT_TIME_S).to_string()]);
        }
        if self.udp {
            main.push("-u".into());
        }
        if let Some(n) = self.streams {
            main.extend(["-P".into(), n.to_string()]);
        }
        if let Some(b) = &self.bitrate {
            main.extend(["-b".into(), b.clone()]);
        }
        if self.reverse {
            main.push("-R".into());
        }
        if let Some(l) = &self.length {
            main.extend(["-l".into(), l.clone()]);
        }
        main.extend(args);
        Invocation {
            server: Some(Server {
                command: Command::new([Iperf3.program(), "-s", "-p", &port]),
                port: self.port,
            }),
            main: Command::new(main),
            network: self.network,
            ..Invocation::default()
        }
    }

    fn metrics(&self) -> Cow<'static, [MetricDef]> {
        Cow::Borrowed(METRICS)
    }

    fn parse(&self, raw: &Raw) -> Result<Parsed, Invalid> {
        let json = serde_json::from_slice::<Value>(&raw.stdout);
        if let Err(e) = raw.check_exit("iperf3") {
            // -J puts iperf3's own reason in the JSON, clearer than the last lines.
            return Err(match json.as_ref().ok().and_then(error_of) {
                Some(msg) => Invalid::new(format!("{}; iperf3 says: {msg}", e.reason)),
                None => e,
            });
        }
        let v = json.map_err(|e| {
            if raw.stdout.iter().all(u8::is_ascii_whitespace) {
                Invalid::new("iperf3 printed no JSON report on stdout")
                    .hint("the client must run with -J; do not remove it with `args`")
            } else {
                Invalid::new(format!(
                    "iperf3's JSON report is cut short or malformed (line {}, column {}: {e})",
                    e.line(),
                    e.column()
                ))
            }
        })?;
        if let Some(msg) = error_of(&v) {
            let mut invalid = Invalid::new(format!("iperf3 reported an error: {msg}"));
            if msg.contains("unable to connect") {
                invalid = invalid.hint(format!(
                    "nothing accepted on port {}: did the server start (its output is kept with the run), and with network = \"namespaces\", does the client reach the server's side of the pair?",
                    self.port
                ));
            }
            return Err(invalid);
        }
        let end = v
            .get("end")
            .filter(|e| e.as_object().is_some_and(|o| !o.is_empty()))
            .ok_or_else(|| {
                Invalid::new("iperf3's report has no summary (`end` is missing or empty)")
            })?;
        let at = |path: &str| end.pointer(path);
        let what = |path: &str| format!("iperf3's end{}", path.replace('/', "."));
        let num = |path: &str, positive| adapter::number(at(path), &what(path), positive);
        let opt = |path: &str| -> Result<Option<f64>, Invalid> {
            match at(path) {
                None => Ok(None),
                some => adapter::number(some, &what(path), false).map(Some),
            }
        };

        let sent = num("/sum_sent/bits_per_second", true)?;
        let received = num("/sum_received/bits_per_second", true)?;
        let received_bytes = num("/sum_received/bytes", true)?;
        let seconds = num("/sum_received/seconds", true)?;

        let mut p = Parsed::default();
        p.set("sent_bits_per_s", sent);
        p.set("received_bits_per_s", received);
        // What the receiver got is what crossed the network.
        p.set("mib_per_s", received / 8.0 / MIB);
        p.set("bytes", received_bytes);
        for (name, path) in [
            ("retransmits", "/sum_sent/retransmits"),
            ("cpu_host_pct", "/cpu_utilization_percent/host_total"),
            ("cpu_remote_pct", "/cpu_utilization_percent/remote_total"),
        ] {
            if let Some(x) = opt(path)? {
                p.set(name, non_negative(x, &what(path))?);
            }
        }
        // The protocol as the report states it (`args` may hold `-u`), the configured one
        // when it does not say.
        let udp = match v
            .pointer("/start/test_start/protocol")
            .and_then(Value::as_str)
        {
            Some(proto) => proto == "UDP",
            None => self.udp,
        };
        if udp {
            let jitter = non_negative(num("/sum/jitter_ms", false)?, &what("/sum/jitter_ms"))?;
            let lost = num("/sum/lost_percent", false)?;
            if !(0.0..=100.0).contains(&lost) {
                return Err(Invalid::new(format!(
                    "{} is {lost}, not a percentage",
                    what("/sum/lost_percent")
                )));
            }
            p.set("jitter_ns", jitter * 1e6);
            p.set("lost_pct", lost);
        }
        p.claimed = Claimed {
            // A network test moves no file data: its reads and writes are socket bytes on
            // both sides of the connection, not the storage traffic the claims are checked
            // against.
            seconds: Some(seconds),
            bytes_per_s: Some(received / 8.0),
            ..Claimed::default()
        };
        Ok(p)
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The report's `error`, when it has a non-empty one.
fn error_of(v: &Value) -> Option<&str> {
    v.get("error")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn non_negative(x: f64, what: &str) -> Result<f64, Invalid> {
    if x < 0.0 {
        return Err(Invalid::new(format!("{what} is {x}, below 0")));
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{close, opts, raw, stdout};
    use serde_json::json;

    fn run(keys: Value) -> Box<dyn ToolRun> {
        try_run(keys).unwrap()
    }

    fn try_run(keys: Value) -> Result<Box<dyn ToolRun>, OptError> {
        Iperf3.configure(&opts(keys))
    }

    fn parse(stem: &str) -> Result<Parsed, Invalid> {
        run(json!({})).parse(&raw(&format!("iperf3/{stem}"), 0))
    }

    fn tcp_text() -> String {
        String::from_utf8(crate::testdata::read("iperf3/tcp.stdout")).unwrap()
    }

    #[test]
    fn tcp_over_loopback_gives_the_reports_numbers() {
        let p = parse("tcp").unwrap();
        close(p.get("sent_bits_per_s"), 31622639846.714565);
        close(p.get("received_bits_per_s"), 31613969705.889553);
        assert_eq!(p.get("retransmits"), Some(34.0));
        close(p.get("cpu_host_pct"), 90.70936562049134);
        close(p.get("cpu_remote_pct"), 43.84104252499265);
        assert_eq!(p.get("bytes"), Some(7907376993.0));
        // 31613969705.889553 bit/s / 8 / 2^20
        close(p.get("mib_per_s"), 31613969705.889553 / 8.0 / 1048576.0);
        // TCP has no jitter or loss: not measured, not 0.
        assert_eq!(p.get("jitter_ns"), None);
        assert_eq!(p.get("lost_pct"), None);
        close(p.claimed.seconds, 2.000983);
        close(p.claimed.bytes_per_s, 31613969705.889553 / 8.0);
        assert_eq!(p.claimed.read_bytes, None);
        assert_eq!(p.claimed.write_bytes, None);
    }

    #[test]
    fn udp_gives_jitter_in_ns_and_loss() {
        let p = parse("udp").unwrap();
        close(p.get("sent_bits_per_s"), 100002785.85652839);
        close(p.get("received_bits_per_s"), 100000235.98182939);
        assert_eq!(p.get("bytes"), Some(25001984.0));
        close(p.get("jitter_ns"), 0.006364847713824667 * 1e6);
        assert_eq!(p.get("lost_pct"), Some(0.0));
        assert_eq!(p.get("retransmits"), None);
        close(p.get("cpu_host_pct"), 2.25585880427795);
    }

    #[test]
    fn reverse_with_two_streams_reads_the_sums() {
        let p = parse("reverse").unwrap();
        close(p.get("sent_bits_per_s"), 24137133348.9993);
        close(p.get("received_bits_per_s"), 24101700274.790108);
        assert_eq!(p.get("bytes"), Some(6025641984.0));
        assert_eq!(p.get("retransmits"), Some(4.0));
        close(p.get("cpu_remote_pct"), 12.665428070599976);
    }

    #[test]
    fn a_refused_connection_that_exits_0_is_invalid_with_iperf3s_message() {
        let e = parse("refused").unwrap_err();
        assert_eq!(
            e.reason,
            "iperf3 reported an error: unable to connect to server: Connection refused"
        );
        assert!(e.hint.unwrap().contains("port 5301"));
    }

    #[test]
    fn a_server_that_vanished_mid_test_is_invalid() {
        let e = parse("server-killed").unwrap_err();
        assert_eq!(
            e.reason,
            "iperf3 reported an error: unable to write to stream socket: Connection reset by peer"
        );
    }

    #[test]
    fn a_failed_exit_quotes_the_jsons_error() {
        let mut r = raw("iperf3/refused", 1);
        let e = run(json!({})).parse(&r).unwrap_err();
        assert!(e.reason.starts_with("iperf3 exited with code 1"), "{e}");
        assert!(e
            .reason
            .ends_with("iperf3 says: unable to connect to server: Connection refused"));
        r.stdout.clear();
        r.stderr = b"iperf3: unrecognized option '--nonsense'\n".to_vec();
        let e = run(json!({})).parse(&r).unwrap_err();
        assert_eq!(
            e.reason,
            "iperf3 exited with code 1: iperf3: unrecognized option '--nonsense'"
        );
    }

    #[test]
    fn a_report_without_end_or_cut_short_or_empty_is_invalid() {
        let text = tcp_text();
        let cut = &text[..text.find("\"end\"").unwrap()];
        let e = run(json!({})).parse(&stdout(cut)).unwrap_err();
        assert!(
            e.reason
                .starts_with("iperf3's JSON report is cut short or malformed (line "),
            "{e}"
        );

        let mut v: Value = serde_json::from_str(&text).unwrap();
        v.as_object_mut().unwrap().remove("end");
        let e = run(json!({})).parse(&stdout(&v.to_string())).unwrap_err();
        assert_eq!(
            e.reason,
            "iperf3's report has no summary (`end` is missing or empty)"
        );
        v["end"] = json!({});
        let e = run(json!({})).parse(&stdout(&v.to_string())).unwrap_err();
        assert_eq!(
            e.reason,
            "iperf3's report has no summary (`end` is missing or empty)"
        );

        let e = run(json!({})).parse(&stdout("\n")).unwrap_err();
        assert_eq!(e.reason, "iperf3 printed no JSON report on stdout");
    }

    #[test]
    fn zero_missing_or_non_numeric_rates_are_invalid() {
        let base: Value = serde_json::from_str(&tcp_text()).unwrap();
        let check = |path: &str, value: Value, want: &str| {
            let mut v = base.clone();
            *v.pointer_mut(path).unwrap() = value;
            let e = run(json!({})).parse(&stdout(&v.to_string())).unwrap_err();
            assert_eq!(e.reason, want);
        };
        check(
            "/end/sum_received/bits_per_second",
            json!(0),
            "iperf3's end.sum_received.bits_per_second is 0, where a result must be above 0",
        );
        check(
            "/end/sum_sent/bits_per_second",
            json!("fast"),
            "iperf3's end.sum_sent.bits_per_second is the text \"fast\", not a number",
        );
        check(
            "/end/sum_received",
            json!({}),
            "iperf3's end.sum_received.bits_per_second is missing",
        );
        check(
            "/end/sum_sent/retransmits",
            json!(-1),
            "iperf3's end.sum_sent.retransmits is -1, below 0",
        );
    }

    #[test]
    fn udp_needs_jitter_and_a_percentage_lost() {
        let text = String::from_utf8(crate::testdata::read("iperf3/udp.stdout")).unwrap();
        let base: Value = serde_json::from_str(&text).unwrap();
        let mut v = base.clone();
        v["end"]["sum"].as_object_mut().unwrap().remove("jitter_ms");
        let e = run(json!({})).parse(&stdout(&v.to_string())).unwrap_err();
        assert_eq!(e.reason, "iperf3's end.sum.jitter_ms is missing");
        let mut v = base;
        v["end"]["sum"]["lost_percent"] = json!(140);
        let e = run(json!({})).parse(&stdout(&v.to_string())).unwrap_err();
        assert_eq!(
            e.reason,
            "iperf3's end.sum.lost_percent is 140, not a percentage"
        );
    }

    #[test]
    fn the_invocation_runs_a_server_and_a_json_client() {
        let r = run(json!({
            "protocol": "udp", "streams": 4, "bitrate": "100M", "reverse": true,
            "port": 6000, "length": 1400, "network": "namespaces",
        }));
        let at = Placeholders {
            server: Some("10.9.0.2".into()),
            time_s: Some(3),
            run: 1,
            ..Placeholders::default()
        };
        let inv = r.invocation(&at);
        assert_eq!(
            inv.main.argv,
            [
                "iperf3", "-c", "10.9.0.2", "-p", "6000", "-J", "-t", "3", "-u", "-P", "4", "-b",
                "100M", "-R", "-l", "1400"
            ]
        );
        let server = inv.server.unwrap();
        assert_eq!(server.command.argv, ["iperf3", "-s", "-p", "6000"]);
        assert_eq!(server.port, 6000);
        assert_eq!(inv.network, Network::NamespacePair);
    }

    #[test]
    fn defaults_are_loopback_port_5301_and_five_seconds() {
        let opts = Opts {
            args: vec!["-T".into(), "run{run}".into()],
            ..Opts::default()
        };
        let r = Iperf3.configure(&opts).unwrap();
        let inv = r.invocation(&Placeholders {
            run: 2,
            ..Placeholders::default()
        });
        assert_eq!(
            inv.main.argv,
            [
                "iperf3",
                "-c",
                "127.0.0.1",
                "-p",
                "5301",
                "-J",
                "-t",
                "5",
                "-T",
                "run2"
            ]
        );
        assert_eq!(inv.network, Network::Loopback);
        // An end condition in `args` replaces `-t`.
        let opts = Opts {
            args: vec!["-n".into(), "1G".into()],
            ..Opts::default()
        };
        let inv = Iperf3
            .configure(&opts)
            .unwrap()
            .invocation(&Placeholders::default());
        assert!(
            !inv.main.argv.contains(&"-t".to_string()),
            "{:?}",
            inv.main.argv
        );
    }

    #[test]
    fn bad_keys_are_named() {
        let err = |keys: Value| try_run(keys).unwrap_err();
        assert_eq!(err(json!({"protocol": "sctp"})).key, "protocol");
        assert_eq!(err(json!({"network": "bridge"})).key, "network");
        assert_eq!(err(json!({"streams": 0})).key, "streams");
        assert_eq!(err(json!({"streams": 129})).key, "streams");
        assert_eq!(err(json!({"port": 70000})).key, "port");
        assert_eq!(err(json!({"reverse": "yes"})).key, "reverse");
        let e = err(json!({"bitrate": "banana"}));
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("bitrate", "\"banana\" is not a quantity this tool reads")
        );
        assert_eq!(err(json!({"length": 0})).key, "length");
        assert_eq!(err(json!({"length": "12KK"})).key, "length");
        assert!(try_run(json!({"bitrate": 0, "length": "128K"})).is_ok());
        let opts = Opts {
            args: vec!["{nope}".into()],
            ..Opts::default()
        };
        assert_eq!(Iperf3.configure(&opts).unwrap_err().key, "args");
    }

    #[test]
    fn the_version_is_iperf3s_first_line() {
        assert_eq!(
            Iperf3
                .version("iperf 3.12 (cJSON 1.7.15)\nLinux vm 6.18\n")
                .as_deref(),
            Some("iperf 3.12 (cJSON 1.7.15)")
        );
    }
}
