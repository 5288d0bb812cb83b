//! `clusterd`: fleet-compatible cluster agent, engine and API over etcd.
//!
//! Flags are parsed by [`flotilla_cluster::config`]; this file claims the
//! machine ID ([`flotilla_cluster::claim`]), starts the three parts on one
//! tokio runtime and waits for SIGTERM or SIGINT, which stop the units
//! clusterd placed on its machine before it leaves the cluster
//! ([`flotilla_cluster::purge`]), as fleetd did. A clusterd that dies leaves
//! them running; the next one picks up its claim and presence lease within
//! the TTL. Exit status: 0 after a signal, 2 for a bad command line, 1 when
//! the API cannot listen.

use flotilla_cluster::api::Api;
use flotilla_cluster::config::{parse_args, Parsed};
use flotilla_cluster::listen::Listen;
use flotilla_cluster::registry::{EtcdConfig, Registry};
use flotilla_cluster::serve;
use flotilla_cluster::{agent, app, claim, control, engine, forward, purge};
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let etc = std::fs::read_to_string("/etc/machine-id").ok();
    let cfg = match parse_args(&args, etc.as_deref(), control::default_control_path()) {
        Ok(Parsed::Run(c)) => c,
        Ok(Parsed::Print(s)) => {
            println!("{s}");
            return;
        }
        Err(e) => {
            eprintln!("clusterd: {e}");
            std::process::exit(2);
        }
    };
    // One thread: clusterd's work is waiting on etcd, the init and its
    // clients; a second worker only added wake-ups between threads (an
    // agent of 100 units spent most of its CPU in them).
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("clusterd: cannot start the runtime: {e}");
            std::process::exit(1);
        }
    };
    std::process::exit(rt.block_on(run(*cfg)));
}

async fn run(cfg: flotilla_cluster::config::Config) -> i32 {
    let ecfg = EtcdConfig {
        endpoints: cfg.etcd.clone(),
        prefix: cfg.prefix.clone(),
        ca: cfg.etcd_ca.clone(),
        cert: cfg.etcd_cert.clone(),
        key: cfg.etcd_key.clone(),
        timeout: Some(Duration::from_secs(5)),
    };
    let reg = loop {
        match Registry::connect(&ecfg).await {
            Ok(r) => break r,
            Err(e) if cfg.etcd_ca.is_some() => {
                // Connecting is lazy: what fails here is the TLS files.
                eprintln!("clusterd: {e}");
                return 2;
            }
            Err(e) => {
                eprintln!("clusterd: {e}; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    eprintln!(
        "clusterd: machine {} joining etcd {} (prefix {}), API on {:?}",
        cfg.machine_id,
        cfg.etcd.join(","),
        reg.keys().prefix(),
        cfg.api
    );
    // The forwarded writes' TLS client: its files are the API's, so that a
    // bad one stops clusterd here as the API's listen would.
    let forward_tls = match cfg.api_tls.as_ref().map(forward::tls_client_config) {
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            eprintln!("clusterd: API: {e:#}");
            return 1;
        }
        None => None,
    };
    let plain_tcp = matches!(cfg.api, Listen::Tcp(_)) && cfg.api_tls.is_none();
    let (committer_tx, committer) = tokio::sync::watch::channel(None);
    tokio::spawn(forward::follow(reg.clone(), committer_tx));
    let api = Arc::new(Api::new(
        reg.clone(),
        plain_tcp,
        cfg.machine_id.clone(),
        committer,
        forward_tls,
    ));
    let app = app::router(api.clone());
    let listen = cfg.api.clone();
    let api_tls = cfg.api_tls.clone();
    let mut api_task =
        tokio::spawn(async move { serve::serve(&listen, api_tls.as_ref(), app).await });
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("clusterd: cannot handle SIGTERM: {e}");
            return 1;
        }
    };
    // One clusterd per machine ID, claimed before the engine and the
    // agent start. Refused (the ID is in use), clusterd runs on with its
    // API answering 503 and claims again every second, as fleetd retried
    // registering; etcd unreachable, the API answers (503s from etcd).
    let me = claim::identity(&cfg.control);
    let claiming = async {
        let (mut unreachable, mut in_use) = (false, false);
        loop {
            match claim::claim(&reg, &cfg.machine_id, &me, cfg.agent_ttl).await {
                Ok(k) => {
                    if in_use {
                        eprintln!("clusterd: machine ID {} is free: claimed", cfg.machine_id);
                    }
                    api.refuse(false);
                    return k;
                }
                Err(claim::Refused::InUse(by)) => {
                    api.refuse(true);
                    if !in_use {
                        eprintln!(
                            "clusterd: REFUSED: machine ID {} is in use by a running clusterd ({by}); \
                             this one ({me}) does not register or schedule, its API answers 503, \
                             and it claims the ID again every second",
                            cfg.machine_id
                        );
                        in_use = true;
                    }
                }
                Err(claim::Refused::Etcd(e)) => {
                    if !unreachable {
                        eprintln!(
                            "clusterd: cannot claim machine ID {}: {e}; retrying",
                            cfg.machine_id
                        );
                        unreachable = true;
                    }
                }
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    let claimed = tokio::select! {
        k = claiming => k,
        _ = term.recv() => return 0,
        _ = tokio::signal::ctrl_c() => return 0,
    };
    let claim_task = tokio::spawn(claim::keep(
        reg.clone(),
        cfg.machine_id.clone(),
        me.clone(),
        cfg.agent_ttl,
        claimed,
    ));
    let engine = tokio::spawn(engine::run(
        reg.clone(),
        cfg.machine_id.clone(),
        cfg.agent_ttl,
        cfg.api_advertise.clone(),
    ));
    let agent = tokio::spawn(agent::run(
        reg.clone(),
        agent::AgentConfig {
            machine_id: cfg.machine_id.clone(),
            public_ip: cfg.public_ip.clone(),
            metadata: cfg.metadata.clone(),
            ttl: cfg.agent_ttl,
            control: cfg.control.clone(),
            capacity: cfg.capacity.capacity(kernel_resources(), cfg.reserve),
        },
    ));
    tokio::select! {
        r = &mut api_task => {
            match r {
                Ok(Err(e)) => eprintln!("clusterd: API: {e:#}"),
                Ok(Ok(())) => eprintln!("clusterd: API stopped"),
                Err(e) => eprintln!("clusterd: API task: {e}"),
            }
            return 1;
        }
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    // Stopped: nothing more is scheduled or applied from here; the units
    // placed here stop, then the machine leaves.
    engine.abort();
    agent.abort();
    claim_task.abort();
    eprintln!("clusterd: stopping: purging the units placed on this machine");
    match purge::purge(&reg, &cfg.machine_id, &cfg.control).await {
        Ok(()) => eprintln!(
            "clusterd: units stopped; machine {} left the cluster",
            cfg.machine_id
        ),
        Err(e) => eprintln!(
            "clusterd: purge incomplete: {e}; the machine stays present until its lease expires"
        ),
    }
    0
}

/// The machine's memory (`MemTotal` of /proc/meminfo, in MiB) and the CPUs
/// this process may run on (its affinity and cgroup quota, in hundredths
/// of a core); zero for what cannot be read.
fn kernel_resources() -> flotilla_units::fleet_api::Resources {
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get() as u64 * 100);
    flotilla_units::fleet_api::Resources { cores, memory }
}
