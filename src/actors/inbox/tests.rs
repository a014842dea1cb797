use super::*;
use crate::actors::network::IdleGate;
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::packet::{Body, CloseKind, Notice, Packet};

type Log = Rc<RefCell<Vec<String>>>;

/// Writes down every message it handles; `Echo` makes it send itself one more.
struct Recorder {
    log: Log,
    me: Local<Recorder>,
}

impl Actor for Recorder {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.log.borrow_mut().push("stopped".into());
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct Note(&'static str);

impl Handler<Note> for Recorder {
    type Result = ();
    fn handle(&mut self, Note(text): Note, _: &mut Context<Self>) {
        self.log.borrow_mut().push(text.into());
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct Echo(&'static str);

impl Handler<Echo> for Recorder {
    type Result = ();
    fn handle(&mut self, Echo(text): Echo, _: &mut Context<Self>) {
        self.log.borrow_mut().push(format!("echo {text}"));
        self.me.do_send(Note(text));
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct Halt;

impl Handler<Halt> for Recorder {
    type Result = ();
    fn handle(&mut self, _: Halt, ctx: &mut Context<Self>) {
        self.log.borrow_mut().push("halt".into());
        ctx.stop();
    }
}

impl Handler<Packets> for Recorder {
    type Result = ();
    fn handle(&mut self, packets: Packets, _: &mut Context<Self>) {
        let n = match packets {
            Packets::One(_) => 1,
            Packets::Many(ps) => ps.len(),
        };
        self.log.borrow_mut().push(format!("{n} packets"));
    }
}

crate::local_actor!(endpoints: Recorder; parts:);

fn packet(id: u64) -> Packet {
    let notice = Notice::ChannelClosed { channel: ChannelId(1), peer: NodeId(9), kind: CloseKind::Fin };
    Packet { id, from: NodeId(9), to: NodeId(0), channel: ChannelId(1), body: Body::Notice(notice) }
}

/// A started recorder, its address, and its log.
fn recorder() -> (Local<Recorder>, Log) {
    let log: Log = Rc::default();
    let me = Local::new();
    me.start(Recorder { log: log.clone(), me: me.clone() });
    (me, log)
}

/// Lets the woken actors run.
async fn settle() {
    for _ in 0..4 {
        crate::actors::runtime::yield_now().await;
    }
}

fn run(test: impl std::future::Future<Output = ()>) {
    IdleGate::default().block_on(test);
}

/// One queue, first in first out, whoever sends: the network's packets, other actors' messages,
/// and what the actor sends itself while it handles one (after what was queued before it).
#[test]
fn messages_are_handled_in_the_order_they_were_sent_whoever_sends_them() {
    run(async {
        let (me, log) = recorder();
        me.do_send(Note("first"));
        me.endpoint().deliver(Packets::Many(vec![packet(1), packet(2)]));
        me.do_send(Echo("again"));
        me.do_send(Note("last"));
        settle().await;
        assert_eq!(*log.borrow(), ["first", "2 packets", "echo again", "last", "again"]);
    });
}

/// A message waits for the actor to start, as in actix's mailbox: `started` runs first.
#[test]
fn what_is_sent_before_the_actor_starts_waits_for_it() {
    run(async {
        let log: Log = Rc::default();
        let me = Local::new();
        me.do_send(Note("early"));
        me.start(Recorder { log: log.clone(), me: me.clone() });
        assert!(log.borrow().is_empty(), "handled only when its task runs");
        settle().await;
        assert_eq!(*log.borrow(), ["early"]);
    });
}

/// A stopped actor handles nothing more, what was queued behind the stop included, and a sender
/// waiting for an answer (`send`) is let go rather than left waiting forever.
#[test]
fn a_stopped_actor_drops_its_messages_and_lets_its_senders_go() {
    run(async {
        let (me, log) = recorder();
        me.do_send(Halt);
        me.do_send(Note("queued behind the stop"));
        settle().await;
        me.do_send(Note("after the stop"));
        me.send(Note("waited for")).await;
        settle().await;
        assert_eq!(*log.borrow(), ["halt", "stopped"]);
    });
}

/// `send` resolves once the handler has run, not when the message is queued.
#[test]
fn send_resolves_after_the_handler_ran() {
    run(async {
        let (me, log) = recorder();
        let answered = me.send(Note("asked"));
        assert!(log.borrow().is_empty());
        answered.await;
        assert_eq!(*log.borrow(), ["asked"]);
    });
}

/// With its last address dropped nothing can reach the actor, and it stops, as an actix actor
/// does when its last `Addr` goes.
#[test]
fn an_actor_no_address_reaches_stops() {
    run(async {
        let log: Log = Rc::default();
        let me: Local<Recorder> = Local::new();
        // An actor that does not hold its own address.
        let other = Local::new();
        other.start(Recorder { log: log.clone(), me: me.clone() });
        drop(me);
        settle().await;
        assert!(log.borrow().is_empty(), "an address is still held");
        drop(other);
        settle().await;
        assert_eq!(*log.borrow(), ["stopped"]);
    });
}
