use super::*;

#[test]
fn rfc3339_known_instants() {
    assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        rfc3339(1_795_320_000, 123_000_000),
        "2026-11-22T04:00:00.123Z"
    );
    assert_eq!(rfc3339(951_782_400, 0), "2000-02-29T00:00:00.000Z");
}

#[test]
fn request_wire_shape() {
    let e = Envelope::new(Request::SetTarget {
        target: "default".into(),
        wait: true,
        isolate: false,
    });
    let s = serde_json::to_string(&e).unwrap();
    assert_eq!(
        s,
        r#"{"v":1,"op":"set-target","target":"default","wait":true}"#
    );
    let back: Envelope = serde_json::from_str(&s).unwrap();
    assert_eq!(back, e);
    let e: Envelope = serde_json::from_str(r#"{"v":1,"op":"status"}"#).unwrap();
    assert_eq!(e.request, Request::Status { name: None });
}

#[test]
fn reply_wire_shape() {
    let r = Reply::error(ErrorCode::UnknownUnit, "no unit named x");
    let s = serde_json::to_string(&r).unwrap();
    assert_eq!(
        s,
        r#"{"reply":"error","code":"unknown-unit","message":"no unit named x"}"#
    );
    assert!(r.is_final());
}

#[test]
fn reload_wire_shape() {
    // `initctl reload` sends what it always sent; busd's daemon-reload
    // says `keep_running`.
    let plain = Envelope::new(Request::Reload {
        keep_running: false,
    });
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        r#"{"v":1,"op":"reload"}"#
    );
    let e: Envelope = serde_json::from_str(r#"{"v":1,"op":"reload"}"#).unwrap();
    assert_eq!(e, plain);
    let keep = Envelope::new(Request::Reload { keep_running: true });
    let s = serde_json::to_string(&keep).unwrap();
    assert_eq!(s, r#"{"v":1,"op":"reload","keep_running":true}"#);
    assert_eq!(serde_json::from_str::<Envelope>(&s).unwrap(), keep);
    assert!(keep.request.is_mutating());
}

#[test]
fn transient_patch_wire_shape() {
    let e: Envelope = serde_json::from_str(
        r#"{"v":1,"op":"transient-patch","set":"cluster","upsert":[],"remove":["a"]}"#,
    )
    .unwrap();
    assert_eq!(
        e.request,
        Request::TransientPatch {
            set: "cluster".into(),
            upsert: Vec::new(),
            remove: vec!["a".into()],
        }
    );
    assert!(e.request.is_mutating());
    let s = serde_json::to_string(&e).unwrap();
    assert_eq!(
        s,
        r#"{"v":1,"op":"transient-patch","set":"cluster","upsert":[],"remove":["a"]}"#
    );
}

#[test]
fn transient_lease_wire_shape() {
    let line = r#"{"v":1,"op":"transient-lease","set":"cluster","stop_at":1600,"kill_at":1900}"#;
    let e: Envelope = serde_json::from_str(line).unwrap();
    assert_eq!(
        e.request,
        Request::TransientLease {
            set: "cluster".into(),
            stop_at: Some(1600),
            kill_at: Some(1900),
            units: None,
        }
    );
    assert!(e.request.is_mutating());
    assert_eq!(serde_json::to_string(&e).unwrap(), line);
}

/// The reply to a renewal of a lease that had fired says so on the wire.
#[test]
fn lease_fired_wire_shape() {
    let r = Reply::LeaseFired {
        message: "m".into(),
    };
    let line = r#"{"reply":"lease-fired","message":"m"}"#;
    assert_eq!(serde_json::to_string(&r).unwrap(), line);
    assert_eq!(serde_json::from_str::<Reply>(line).unwrap(), r);
    assert!(r.is_final());
}

#[test]
fn log_writer_wire_shape() {
    let e: Envelope = serde_json::from_str(
        r#"{"v":1,"op":"log-pull","ack":{"batch":3,"failed":[{"unit":"web","error":"full"}]}}"#,
    )
    .unwrap();
    assert_eq!(
        e.request,
        Request::LogPull {
            ack: Some(LogAck {
                batch: 3,
                failed: vec![LogFailure {
                    unit: "web".into(),
                    error: "full".into()
                }],
            }),
            retry: false,
            max_bytes: None,
            leaving: false,
        }
    );
    assert!(e.request.is_mutating());
    let first = Envelope::new(Request::LogPull {
        ack: None,
        retry: false,
        max_bytes: None,
        leaving: false,
    });
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        r#"{"v":1,"op":"log-pull"}"#
    );
    let r = Reply::LogBatch(LogBatch {
        batch: 4,
        dir: "/var/log/init".into(),
        chunks: vec![LogChunk {
            unit: "web".into(),
            stream: "1-2/0".into(),
            persisted: 0,
            lost: 0,
            lines: vec![LogLine {
                time: "t".into(),
                stream: "stdout".into(),
                line: "hi".into(),
                seq: Some(1),
                cut: false,
            }],
        }],
        last: false,
    });
    let s = serde_json::to_string(&r).unwrap();
    assert_eq!(
        s,
        r#"{"reply":"log-batch","batch":4,"dir":"/var/log/init","chunks":[{"unit":"web","stream":"1-2/0","persisted":0,"lines":[{"time":"t","stream":"stdout","line":"hi","seq":1}]}]}"#
    );
    assert!(r.is_final());
    assert!(!Reply::LogSource(LogSource {
        dir: None,
        stream: String::new(),
        persisted: 0,
        first: 1,
        next: 1,
    })
    .is_final());
    // A line from an init before `seq`.
    let old: LogLine =
        serde_json::from_str(r#"{"time":"t","stream":"stdout","line":"x"}"#).unwrap();
    assert_eq!((old.seq, old.cut), (None, false));
}

#[test]
fn control_socket_path_rule() {
    use std::ffi::OsStr;
    use std::path::PathBuf;
    let os = |s: &'static str| Some(OsStr::new(s));
    // $INIT_CONTROL first, for root and users alike.
    assert_eq!(
        control_socket_path(os("/env.sock"), true, os("/run/user/1")),
        Some(PathBuf::from("/env.sock"))
    );
    assert_eq!(
        control_socket_path(os("/env.sock"), false, None),
        Some(PathBuf::from("/env.sock"))
    );
    // The system socket for root, even with a runtime directory.
    assert_eq!(
        control_socket_path(None, true, os("/run/user/0")),
        Some(PathBuf::from(SYSTEM_CONTROL_SOCKET))
    );
    assert_eq!(
        control_socket_path(os(""), true, None),
        Some(PathBuf::from(SYSTEM_CONTROL_SOCKET))
    );
    // A user's runtime directory; nothing without one.
    assert_eq!(
        control_socket_path(None, false, os("/run/user/1000")),
        Some(PathBuf::from("/run/user/1000/init/control.sock"))
    );
    assert_eq!(control_socket_path(None, false, None), None);
    assert_eq!(control_socket_path(os(""), false, os("")), None);
}

#[test]
fn decode_requests_and_errors() {
    let text = |r: Result<Envelope, BadRequest>| r.map(|e| e.request).unwrap_err().to_string();
    assert_eq!(
        decode_request(br#"{"v":1,"op":"list"}"#).map(|e| e.request),
        Ok(Request::List)
    );
    assert_eq!(
        text(decode_request(b"nope")).split(':').next(),
        Some("not JSON")
    );
    assert_eq!(
        decode_request(br#"{"op":"list"}"#).unwrap_err(),
        BadRequest::Malformed("missing protocol version `v`".into())
    );
    assert_eq!(
        decode_request(br#"{"v":2,"op":"list"}"#).unwrap_err(),
        BadRequest::UnsupportedVersion(2)
    );
    assert_eq!(
        text(decode_request(br#"{"v":2,"op":"list"}"#)),
        "unsupported protocol version 2 (this init speaks 1)"
    );
    assert!(text(decode_request(br#"{"v":1,"op":"explode"}"#))
        .starts_with("bad request: unknown variant `explode`"));
    assert!(text(decode_request(br#"{"v":1,"op":"restart"}"#)).contains("missing field `unit`"));
}

#[test]
fn systemd_timestamps() {
    assert_eq!(systemd_timestamp(0), "Thu 1970-01-01 00:00:00 UTC");
    // 2026-11-23 06:00:00 UTC, a Monday.
    assert_eq!(
        systemd_timestamp(1_795_413_600),
        "Mon 2026-11-23 06:00:00 UTC"
    );
}
