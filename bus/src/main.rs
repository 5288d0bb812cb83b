//! `flotilla-busd`: systemd's D-Bus interface beside the init
//! (`docs/dbus.md`). Usage: `flotilla-busd [--socket PATH] [--control
//! PATH] [--no-system-bus]`. Without `--socket` it serves the socket the
//! init hands it (`LISTEN_FDS`).

use flotilla_bus::hub::Hub;
use flotilla_bus::listen;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: flotilla-busd [--socket PATH] [--control PATH] [--no-system-bus]";

struct Args {
    socket: Option<PathBuf>,
    control: Option<PathBuf>,
    system_bus: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        socket: None,
        control: None,
        system_bus: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--socket" => a.socket = Some(it.next().ok_or("--socket needs a path")?.into()),
            "--control" => a.control = Some(it.next().ok_or("--control needs a path")?.into()),
            "--no-system-bus" => a.system_bus = false,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument '{other}'\n{USAGE}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("flotilla-busd: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(control) = flotilla_client::control_path(args.control) else {
        eprintln!("flotilla-busd: no control socket: give --control PATH or set INIT_CONTROL");
        return ExitCode::from(2);
    };
    let listener = match &args.socket {
        Some(p) => match listen::bind(p) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("flotilla-busd: cannot listen on {}: {e}", p.display());
                return ExitCode::from(1);
            }
        },
        None => match listen::inherited() {
            Some(l) => l,
            None => {
                eprintln!("flotilla-busd: no socket: give --socket PATH, or start it with LISTEN_FDS=1 and the socket as fd 3");
                return ExitCode::from(2);
            }
        },
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("flotilla-busd: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let result = rt.block_on(async move {
        let hub = Hub::new(control);
        tokio::spawn(hub.clone().follow());
        if args.system_bus {
            tokio::spawn(listen::system_bus_when_up(hub.clone()));
        }
        listen::accept(hub, listener).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flotilla-busd: {e}");
            ExitCode::from(1)
        }
    }
}
