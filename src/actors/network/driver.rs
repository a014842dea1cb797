//! The driver: the network's one loop, which moves virtual time and delivers each instant's
//! entries, one pass each time every actor has run dry.

use super::batches::Batches;
use super::idle::{IdleGate, Pass, Woken};
use super::kernel::Due;
use super::Net;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::invariants::Arrival;
use crate::sim::observe::Obs;
use crate::sim::packet::Packet;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::oneshot;

/// The driver's loop, as the gate runs it: one pass each time the gate opens.
struct Driver {
    net: Net,
    end: SimTime,
    max_events: u64,
    stop: Option<Arc<AtomicBool>>,
    /// The observer never changes during a run: one handle for all of it, not a clone of its
    /// half-dozen shared parts at every instant.
    obs: Obs,
    gate: IdleGate,
    /// Told how the run ended.
    done: RefCell<Option<oneshot::Sender<Option<SimTime>>>>,
    /// An instant's deliveries and entries, kept from pass to pass for their memory. They are
    /// the driver's own: kept in the network, they were taken out and put back at every instant,
    /// and each putting back dropped the empty stand-in left there: 60 instructions an instant,
    /// 1.7% of the RocketMQ bench.
    scratch: RefCell<Scratch>,
}

#[derive(Default)]
struct Scratch {
    /// The deliveries of one pass, gathered per endpoint.
    batches: Batches,
    /// The entries of the instant being delivered.
    taken: Vec<Due>,
}

impl Driver {
    /// The earliest entry; past the end, one millisecond beyond it: reaching that proves
    /// instant `end` is complete, so the observer sees its final state.
    fn target(&self) -> SimTime {
        let next = self.net.0.borrow().agenda.next_time();
        next.filter(|t| *t <= self.end).unwrap_or(self.end + SimDuration(1))
    }

    /// One pass: when every actor is idle, time jumps to the earliest entry (which they may
    /// have moved earlier); poked, it stays at this instant, where an actor added an entry.
    /// Then the instant's entries are delivered, and again while delivering left entries due
    /// now; then the driver waits for the gate, or the run is over.
    ///
    /// The budget is checked once per instant, before its entries are delivered: a loop that
    /// never lets time move (a timer re-armed every 0 ms) still comes back here between its
    /// rounds, because its actors run only while the driver waits. `stop`, set from another
    /// thread (`check --timeout`), stops the run the same way.
    fn pass(&self, why: Option<Woken>, me: &Pass) {
        match why {
            Some(Woken::Idle) => {
                self.net.advance_to(self.target());
            }
            Some(Woken::Poked) => {}
            // The first pass: nothing due yet, so wait for the actors' start-up to run dry.
            None if self.target() > self.net.now() => return self.gate.wait(me.clone()),
            None => {}
        }
        loop {
            let now = self.net.now();
            self.obs.before_instant(now);
            let finished = if now > self.end {
                self.obs.finish(self.end);
                Some(None)
            } else if self.obs.trace.borrow().count() >= self.max_events
                || self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
            {
                Some(Some(now))
            } else {
                None
            };
            if let Some(stopped) = finished {
                if let Some(done) = self.done.borrow_mut().take() {
                    let _ = done.send(stopped);
                }
                return;
            }
            self.net.dispatch_due(now, &mut self.scratch.borrow_mut());
            if self.target() > self.net.now() {
                break;
            }
        }
        self.gate.wait(me.clone());
    }
}

impl Net {
    /// Starts the network's one loop, which moves virtual time and delivers each instant's
    /// entries until `end`; resolves to `None` then, or, once the trace holds `max_events`
    /// events, stops where it is and resolves to that instant.
    ///
    /// The loop is not an actor, nor a task: it takes no messages (actors reach the network
    /// synchronously through [`Net`], and it reaches them with actix messages), and it runs
    /// only when every actor is idle or one pokes it ([`IdleGate`]). Its first pass is a task,
    /// queued where the run starts it; after that the idle loop runs each pass itself, with
    /// no task to wake and poll. Until 2026-12-05 it was an `async` loop inside an otherwise
    /// empty `NetworkActor`, and each of its wake-ups (one per instant, 512,449 in the RocketMQ
    /// bench hour) cost a task wake-up, a poll of that actor's context and one of the loop's
    /// future: about 500 instructions, 9% of that bench. Every pass runs where the old loop's
    /// would have, so every run is the same event for event.
    pub fn start_driver(
        &self,
        end: SimTime,
        max_events: u64,
        stop: Option<Arc<AtomicBool>>,
    ) -> impl Future<Output = Option<SimTime>> {
        let (gate, obs) = {
            let k = self.0.borrow();
            (k.gate.clone(), k.obs.clone())
        };
        let (done, finished) = oneshot::channel();
        let driver = Rc::new(Driver {
            net: self.clone(),
            end,
            max_events,
            stop,
            obs,
            gate,
            done: RefCell::new(Some(done)),
            scratch: RefCell::default(),
        });
        let pass = Pass::new({
            let driver = driver.clone();
            move |why, me| driver.pass(Some(why), me)
        });
        // The first pass delivers what is due at the start, or waits for the gate.
        crate::actors::runtime::spawn(async move { driver.pass(None, &pass) });
        async move { finished.await.ok().flatten() }
    }

    /// What reaches a (naming) server — registrations, heartbeats, beats — is the monitor's
    /// ground truth; `Arrival::of` picks those out. Asked only when the observer watches the
    /// network.
    fn note_arrival(&self, now: SimTime, p: &Packet) {
        let k = self.0.borrow();
        if let Some(arrival) = Arrival::of(&p.body) {
            let (from, to) = (k.core.name(p.from).to_string(), k.core.name(p.to).to_string());
            let obs = k.obs.clone();
            drop(k);
            obs.arrived(now, &from, &to, arrival);
        }
    }

    /// Delivers everything due at `now`. Packets for one endpoint are gathered into one
    /// message; a batch is sent before any timer of the same process runs, so each process
    /// still sees its packets and timers in agenda order. The instant's entries are taken from
    /// the agenda at once; what they add for this instant is taken by the next round.
    fn dispatch_due(&self, now: SimTime, scratch: &mut Scratch) {
        let Scratch { batches, taken } = scratch;
        let watches = self.0.borrow().obs.watches_network();
        while self.0.borrow_mut().agenda.take_due(now, taken) {
            // Counted, not asked of the iterator: with `while let Some(due) = entries.next()`
            // and `entries.len()` for `more`, this loop ran 5% slower in wall time on the Nacos
            // bench for 0.7% fewer instructions (alternating runs, 2026-12-06), a stall that
            // simulated caches and branches do not show.
            let count = taken.len();
            if count > 1 && !watches && batches.is_empty() && one_destination(taken) {
                self.deliver_together(now, taken, batches);
                continue;
            }
            for (i, due) in taken.drain(..).enumerate() {
                let more = count - 1 - i;
                // One borrow of the network per entry, let go only where someone else may
                // look: before a timer's closure runs, and before the monitor hears of an
                // arrival.
                let mut k = self.0.borrow_mut();
                match due {
                    Due::Timer { owner, epoch, id, fire } => {
                        if let Some(fire) = k.admit_timer(owner, epoch, id, fire) {
                            batches.flush_node(owner, &k.endpoints);
                            drop(k);
                            fire();
                        }
                    }
                    Due::Deliver(packet) => {
                        let (arrival, deliver) = k.arrival(now, &packet);
                        if deliver && !watches {
                            // The instant's last entry, with nothing gathered before it and
                            // nothing more due now: the batch `flush_all` would send next holds
                            // this packet alone, so it goes at once (one packet in three of the
                            // RocketMQ bench, whose instants hold one or two entries).
                            if more == 0 && batches.is_empty() && k.agenda.next_time().is_none_or(|t| t > now) {
                                batches.send_alone(packet, &k.endpoints);
                            } else {
                                batches.gather(packet, &k.endpoints, more);
                            }
                        } else {
                            drop(k);
                            self.deliver_other(now, packet, arrival, deliver, batches, more);
                        }
                    }
                    other => {
                        drop(k);
                        self.dispatch_other(now, other, batches);
                    }
                }
            }
        }
        batches.flush_all(&self.0.borrow().endpoints);
    }

    /// An instant of packets all for one process (a provider's hundred beats reaching the
    /// server, their hundred answers coming back): each is admitted as in the loop above and
    /// the ones taken go, in order, into one batch made to size. Gathered one by one, each
    /// packet was moved out of the instant's entries and again into the batch, which looked up
    /// its node's place each time: about 40 instructions a packet, 4% of the Nacos bench.
    #[inline(never)]
    fn deliver_together(&self, now: SimTime, taken: &mut Vec<Due>, batches: &mut Batches) {
        let mut k = self.0.borrow_mut();
        let mut packets = Vec::with_capacity(taken.len());
        for due in taken.drain(..) {
            let Due::Deliver(packet) = due else { unreachable!("checked by one_destination") };
            match k.arrival(now, &packet) {
                (_, true) => packets.push(packet),
                (arrival, false) => k.turn_away(now, arrival, packet),
            }
        }
        batches.adopt(packets, &k.endpoints);
    }

    /// A delivery someone watches, or one its destination does not take now. Out of line, as
    /// are the rarer entries below: with every case inlined, `dispatch_due` set up the fields
    /// all of them use (about 60 instructions, kept on the stack) at each of its calls, once
    /// an instant, for the one or two entries an instant of a thousand brokers holds.
    #[inline(never)]
    fn deliver_other(
        &self,
        now: SimTime,
        packet: Packet,
        arrival: crate::sim::network::Arrival,
        deliver: bool,
        batches: &mut Batches,
        more: usize,
    ) {
        if !deliver {
            self.0.borrow_mut().turn_away(now, arrival, packet);
        } else {
            self.note_arrival(now, &packet);
            batches.gather(packet, &self.0.borrow().endpoints, more);
        }
    }

    /// Every entry but a timer and a delivery.
    #[inline(never)]
    fn dispatch_other(&self, now: SimTime, due: Due, batches: &mut Batches) {
        let mut k = self.0.borrow_mut();
        match due {
            Due::Alarm { owner, epoch, id, alarm } => {
                if let Some(alarm) = k.admit_alarm(now, owner, epoch, id, alarm) {
                    batches.flush_node(owner, &k.endpoints);
                    drop(k);
                    alarm.ring();
                }
            }
            Due::Datagram(packet) => {
                if let Some(packet) = k.arrive_datagram(now, packet) {
                    batches.gather(packet, &k.endpoints, 0);
                }
            }
            Due::Notice { to, epoch, notice } => {
                if let Some(packet) = k.admit_notice(to, epoch, notice) {
                    batches.gather(packet, &k.endpoints, 0);
                }
            }
            Due::IdleCheck { channel, node, epoch } => k.idle_check(now, channel, node, epoch),
            Due::Retransmit { channel, dir } => k.retransmit(now, channel, dir),
            Due::Syn { channel } => k.syn_retry(now, channel),
            Due::Timer { .. } | Due::Deliver(_) => unreachable!("dispatched in line"),
        }
    }
}

/// Whether every entry is a packet for the same process.
fn one_destination(taken: &[Due]) -> bool {
    let Some(Due::Deliver(first)) = taken.first() else { return false };
    taken.iter().all(|due| matches!(due, Due::Deliver(p) if p.to == first.to))
}
