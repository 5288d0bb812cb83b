#!/bin/bash
# Observes one unit of the daemons' corpus (corpus.rs) in the guest, the
# same way under either init, through Debian's systemctl and journalctl:
#
#   corpus-observe UNIT CYCLE PROBE
#
# CYCLE is `yes` to restart, stop and start it (`no` for sshd, the test's
# way in); PROBE a shell command that succeeds when the daemon answers
# (its port or its own client), empty for none. Prints one line an
# observation, `NAME ok` or `NAME no: WHY`:
#   active   active after boot (within 60 s: the boot may still be busy)
#   answers  PROBE succeeds (within 30 s)
#   reload   where the unit's file has ExecReload=: `systemctl reload`
#            succeeds, the unit stays active and answers
#   restart  `systemctl restart` succeeds, active, answers
#   stop     `systemctl stop` succeeds, the unit is not active, and no
#            process is left in its cgroup (within 15 s)
#   start    `systemctl start` succeeds, active, answers
#   journal  `journalctl -u UNIT -n 5` shows a line
# Every wait is a poll with a deadline: no event says "now listening".
set -u
unit="$1"
cycle="$2"
probe="$3"

# CMD... until it succeeds, at most SECONDS.
within() {
    local end=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}
# The probes' `port N`: a connection accepted on 127.0.0.1:N.
port() { timeout 5 bash -c "</dev/tcp/127.0.0.1/$1"; }
export -f port
state() { systemctl is-active "$unit" 2>/dev/null; }
is_active() { [ "$(state)" = active ]; }
answers() { [ -z "$probe" ] || bash -c "$probe"; }
settled() { case "$(state)" in active|failed) return 0 ;; *) return 1 ;; esac; }

# The unit's file as Debian ships it (or its template's): whether it has
# ExecReload= is read from it, not from either init.
fragment() {
    local d t="${unit%%@*}"
    [ "$t" = "$unit" ] || t="$t@.${unit##*.}"
    for d in /etc/systemd/system /lib/systemd/system; do
        [ -f "$d/$unit" ] && { echo "$d/$unit"; return; }
        [ -f "$d/$t" ] && { echo "$d/$t"; return; }
    done
}

# The unit's cgroup, while it runs (systemd's and flotilla's layout:
# system.slice/UNIT, a template's in system-NAME.slice).
cgroup() { find /sys/fs/cgroup -type d -name "$unit" 2>/dev/null | head -n 1; }
empty() { [ ! -d "$1" ] || [ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ]; }

# How long a systemctl verb may take: what the init itself gives the unit
# on this image, so that the verdict is the init's, not a guess of ours: a
# restart is a stop (DefaultTimeoutStopSec=, 90 s) and a start (the
# image's DefaultTimeoutStartSec=, 5 minutes, contrib/debian/daemons),
# and a margin. A shorter guess (120 s) cut postfix@-'s restart, whose
# configure-instance.sh and `postfix check` take 15 s of the emulated
# CPU alone, on a loaded machine while it was still starting.
verb_limit=420

say() { echo "$1 $2"; }
# NAME: `ok` when the last step succeeded, else `no:` and WHY.
verdict() { if [ "$2" = 0 ]; then say "$1" ok; else say "$1" "no: $3"; fi; }

# A systemctl verb, then the unit active and answering.
cycle_step() {
    local verb="$1" out rc
    out="$(timeout "$verb_limit" systemctl "$verb" "$unit" 2>&1)"
    rc=$?
    if [ $rc -ne 0 ]; then
        verdict "$verb" 1 "systemctl $verb: rc $rc: $(tr '\n' ' ' <<<"$out")"
    elif ! within 30 is_active; then
        verdict "$verb" 1 "$(state) after $verb"
    # 60 s: fail2ban-server (Python, reading its jails' logs) did not
    # answer `fail2ban-client ping` within 30 s of its start in the suite's
    # run from a fresh clone (2026-11-30), three emulated guests on the two
    # cores. A longer wait only turns a `no` into an `ok`, so systemd's
    # record (measured with 30 s) still says what must hold.
    elif ! within 60 answers; then
        verdict "$verb" 1 "does not answer after $verb"
    else
        verdict "$verb" 0
    fi
}

within 60 settled
if is_active; then verdict active 0; else verdict active 1 "$(state) after boot"; fi
if [ -n "$probe" ]; then
    if within 30 answers; then verdict answers 0; else verdict answers 1 "$probe fails"; fi
fi
f="$(fragment)"
if [ -n "$f" ] && grep -q '^ExecReload=' "$f"; then
    cycle_step reload
fi
if [ "$cycle" = yes ]; then
    cycle_step restart
    cg="$(cgroup)"
    out="$(timeout "$verb_limit" systemctl stop "$unit" 2>&1)"
    rc=$?
    if [ $rc -ne 0 ]; then
        verdict stop 1 "systemctl stop: rc $rc: $(tr '\n' ' ' <<<"$out")"
    elif is_active; then
        verdict stop 1 "still active"
    elif [ -n "$cg" ] && ! within 15 empty "$cg"; then
        verdict stop 1 "left in $cg: $(xargs -r ps -o comm= -p < "$cg/cgroup.procs" 2>/dev/null | tr '\n' ' ')"
    else
        verdict stop 0
    fi
    cycle_step start
fi
lines="$(journalctl -u "$unit" -n 5 --no-pager -q 2>/dev/null | grep -vc '^-- ')"
if [ "${lines:-0}" -gt 0 ]; then verdict journal 0; else verdict journal 1 "no entries"; fi
