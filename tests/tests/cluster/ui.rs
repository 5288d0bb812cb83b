//! The dashboard in a real headless browser (Debian's Chromium through
//! ChromeDriver), against three real machines (real inits running
//! clusterd) on a real etcd, the page served on loopback TCP by one of
//! them. A person's way through it: `/` leads to `/ui/`; the machines are
//! listed with their metadata and load; 300 units scroll (only the rows in
//! view are drawn); the filter box finds one; its detail shows its state,
//! its file and the log lines its process printed on its machine; a unit
//! submitted meanwhile appears, and a stopped one changes, without a
//! reload; each machine's reserved share and what is free, and a unit that
//! fits nowhere marked unscheduled with its reason. Screenshots are kept
//! under the target dir in `ui-screenshots/`.

use crate::support::browser::Browser;
use crate::support::etcd::{free_port, Etcd};
use crate::support::fleet::wait_all_launched;
use crate::support::*;
use std::path::PathBuf;
use std::time::Duration;

const UNITS: usize = 300;
const LIVE: Duration = Duration::from_secs(20);

fn shot(b: &Browser, name: &str) {
    let dir: PathBuf = bin_dir()
        .parent()
        .expect("the target dir")
        .join("ui-screenshots");
    b.screenshot(&dir.join(format!("cluster_ui-{name}.png")));
}

fn unit(i: usize) -> String {
    format!("web-{i:03}.service")
}

#[test]
fn the_dashboard_in_a_real_browser() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let md = ["region=east,disk=ssd", "region=west", "region=east"];
    let machines: Vec<Machine> = (0..3)
        .map(|i| {
            let mut extra: Vec<String> = vec!["--capacity".into(), "memory=8192,cores=4".into()];
            if i == 0 {
                extra.extend(["--api-listen".into(), format!("tcp://127.0.0.1:{port}")]);
            }
            Machine::start(
                &etcd.url(),
                dir.path(),
                &format!("ui{i}machine"),
                md[i],
                &format!("192.0.2.{}", i + 1),
                "5s",
                &extra,
            )
        })
        .collect();
    let api = |method: &str, path: &str, body: Option<&str>| {
        http_tcp(&base, method, path, body.map(|_| "application/json"), body)
    };
    wait_for(Duration::from_secs(30), "three machines", || {
        let (c, b) = api("GET", "/fleet/v1/machines", None);
        (c == 200 && b.matches("\"id\"").count() == 3).then_some(())
    });
    // Each unit says hello on its output, then sleeps.
    let mut c = http::Conn::new(&machines[1].sock);
    for i in 0..UNITS {
        let exec = format!(
            "/bin/sh -c \"echo hello from {}; exec /bin/sleep {}\"",
            unit(i),
            300_000 + i
        );
        let (code, b) = c.request(
            "PUT",
            &format!("/fleet/v1/units/{}", unit(i)),
            Some(&unit_body("launched", &exec, &[])),
        );
        assert_eq!(code, 201, "{b}");
    }
    wait_all_launched(&machines[1].sock, UNITS, Duration::from_secs(120));

    // `/` leads to the page.
    let (code, _) = api("GET", "/", None);
    assert_eq!(code, 303);
    let b = Browser::start();
    b.open(&format!("{base}/"));
    assert_eq!(b.url(), format!("{base}/ui/"));
    b.wait("the live stream", LIVE, |b| {
        (b.text("#status") == "live" && b.text("#unit-count") == format!("({UNITS})")).then_some(())
    });
    // Machines, with their metadata and load.
    let rows = b.wait("three machines", LIVE, |b| {
        let v = b.js(
            "return [...document.querySelectorAll('#machines tbody tr')].map(r => r.innerText);",
        );
        let rows: Vec<String> = v
            .as_array()?
            .iter()
            .filter_map(|r| r.as_str().map(String::from))
            .collect();
        (rows.len() == 3).then_some(rows)
    });
    assert!(rows[0].contains("disk=ssd, region=east"), "{rows:?}");
    assert!(
        rows[1].contains("region=west") && rows[1].contains("192.0.2.2"),
        "{rows:?}"
    );
    let load: usize = rows
        .iter()
        .map(|r| {
            r.split('\t')
                .nth(3)
                .unwrap_or("0")
                .trim()
                .parse::<usize>()
                .unwrap_or(0)
        })
        .sum();
    assert_eq!(load, UNITS, "the loads add up: {rows:?}");
    // Only the rows in view are drawn.
    let drawn = b.js("return document.querySelectorAll('.unit-row').length;");
    assert!(drawn.as_u64().is_some_and(|n| n > 5 && n < 100), "{drawn}");
    shot(&b, "01-overview");
    b.js("document.getElementById('units').scrollTop = 1e9; document.getElementById('units').dispatchEvent(new Event('scroll'));");
    b.wait("the last unit drawn", LIVE, |b| {
        b.text("#units").contains(&unit(UNITS - 1)).then_some(())
    });
    shot(&b, "02-scrolled");

    // The filter finds one unit; its detail has its state, file and logs.
    b.type_into("#filter", "web-042");
    b.wait("the filter", LIVE, |b| {
        (b.text("#unit-count") == format!("(1 of {UNITS})")).then_some(())
    });
    b.click(".unit-row[data-name='web-042.service']");
    b.wait("the detail", LIVE, |b| {
        (b.text("#detail-name") == "web-042.service").then_some(())
    });
    b.wait("the unit's log lines from its machine", LIVE, |b| {
        b.text("#logs")
            .contains("hello from web-042.service")
            .then_some(())
    });
    b.wait("its unit file", LIVE, |b| {
        b.text("#unit-file")
            .contains("ExecStart=/bin/sh -c")
            .then_some(())
    });
    assert!(b.text("#detail-states").contains("active"));
    shot(&b, "03-unit-detail");

    // Live: a unit submitted now appears, and changes when stopped.
    b.type_into("#filter", "live-new");
    let (code, body) = api(
        "PUT",
        "/fleet/v1/units/live-new.service",
        Some(&unit_body("launched", "/bin/sleep 310000", &[])),
    );
    assert_eq!(code, 201, "{body}");
    b.wait("the new unit, launched", LIVE, |b| {
        let t = b.text(".unit-row[data-name='live-new.service']");
        (t.contains("launched") && t.contains("active")).then_some(())
    });
    let (code, body) = api(
        "PUT",
        "/fleet/v1/units/live-new.service",
        Some("{\"desiredState\":\"loaded\"}"),
    );
    assert_eq!(code, 204, "{body}");
    b.wait("the unit stopped", LIVE, |b| {
        let t = b.text(".unit-row[data-name='live-new.service']");
        (t.contains("loaded") && t.contains("inactive")).then_some(())
    });
    shot(&b, "04-live-update");

    // A machine's row shows its units only.
    b.click("#clear-filter");
    b.click("#machines tbody tr[data-id='ui1machine']");
    b.wait("the machine's units", LIVE, |b| {
        let t = b.text("#unit-count");
        (t.starts_with('(') && t.ends_with(&format!(" of {})", UNITS + 1))).then_some(())
    });
    shot(&b, "05-one-machine");

    // Reservations: a unit that takes half of one machine, and one that
    // fits nowhere.
    b.click("#clear-filter");
    let fat = unit_body(
        "launched",
        "/bin/sleep 320000",
        &[
            ("MachineID", "ui2machine"),
            ("MemoryReservation", "4096"),
            ("CoresReservation", "200"),
        ],
    );
    assert_eq!(api("PUT", "/fleet/v1/units/fat.service", Some(&fat)).0, 201);
    let big = unit_body(
        "launched",
        "/bin/sleep 330000",
        &[("MemoryReservation", "9000")],
    );
    assert_eq!(
        api("PUT", "/fleet/v1/units/toobig.service", Some(&big)).0,
        201
    );
    let row = |b: &Browser, id: &str| b.text(&format!("#machines tbody tr[data-id='{id}']"));
    b.wait("ui2machine's reserved and free share", LIVE, |b| {
        let t = row(b, "ui2machine");
        (t.contains("50% mem · 50% cpu") && t.contains("4096 MiB · 2.00 cores")).then_some(())
    });
    let t = row(&b, "ui1machine");
    assert!(
        t.contains("0% mem · 0% cpu") && t.contains("8192 MiB · 4.00 cores"),
        "{t}"
    );
    b.type_into("#filter", "unscheduled");
    b.wait(
        "the unit that fits nowhere, alone in the filter",
        LIVE,
        |b| {
            let t = b.text(".unit-row[data-name='toobig.service']");
            (t.contains("unscheduled") && b.text("#unit-count") == format!("(1 of {})", UNITS + 3))
                .then_some(())
        },
    );
    b.click(".unit-row[data-name='toobig.service']");
    b.wait("its reason", LIVE, |b| {
        b.text("#detail-facts")
            .contains("fits on no machine: 3 machines have too little room left")
            .then_some(())
    });
    shot(&b, "06-reservations");
    drop(b);
    drop(machines);
}
