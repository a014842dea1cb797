//! The byte encoding the trace digest hashes: a serde serializer that appends each event, as
//! compactly as is cheap, to a reused buffer.
//!
//! Every event of every run goes through here, so it does the least work that still keeps the
//! encoding *injective* — two different events never give the same bytes, which is what lets
//! equal digests stand for equal traces. It needs no self-description, because every value is
//! read back (in principle) against the one schema, `TraceEvent`:
//!
//! * integers and floats: their own width, little-endian (`f64` as its bits); `bool` one byte;
//! * strings and byte strings: a `u32` length, then the bytes;
//! * `Option`: a `0` byte, or a `1` byte and the value;
//! * enum variants: the `u32` variant index, then the fields (serde's internally tagged enums
//!   arrive as structs whose first field is the tag string);
//! * sequences and maps: a `u32` count, then the items;
//! * structs and tuples: the fields in order, nothing else.
//!
//! It replaced postcard, whose varint loops and per-field writes cost about a third more for the
//! same job; the digests it gives differ from postcard's, and are as stable from run to run.

use crate::nacos::notes::NacosNote;
use crate::rocketmq::notes::{Registration, RmqNote};
use crate::rocketmq::types::{decimal, DataVersion};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::{Name, BLOCK};
use crate::sim::notes::What;
use serde::ser::{self, Serialize};
use std::fmt;

/// Appends `value`'s encoding to `out`.
pub fn encode<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Only the schema's own types reach here and none of them can fail to serialize.
    let done = value.serialize(&mut Encoder { out });
    debug_assert!(done.is_ok());
}

/// Appends one trace event, `(t, actor, what)`, to `out`.
///
/// A big Nacos run is almost all answered beats, so that one event is written here by hand —
/// the same bytes `encode` gives (a test holds the two equal), without the two layers of
/// internally tagged enums serde goes through: `What`'s `area` and `NacosNote`'s `event`.
///
/// A big RocketMQ run is mostly registrations sent and accepted, and with producers, sends ended
/// (one `send_done` per send: 3.6 million in the bench's producers case), written by hand the
/// same way.
/// In these, a name is copied in one piece with its length (`Name::length_prefixed`), and the
/// two tags are one constant.
pub fn encode_event(t: SimTime, actor: Name, what: &What, out: &mut Vec<u8>) {
    let What::Nacos(NacosNote::Beat { instance, server, light, code, next }) = what else {
        return encode_other(t, actor, what, out);
    };
    encode_beat(
        t,
        actor,
        BeatFields { instance: *instance, server: *server, light: *light, code: *code, next: *next },
        out,
    )
}

/// The fields of `NacosNote::Beat`, passed as they are rather than inside an event.
#[derive(Clone, Copy)]
pub struct BeatFields {
    pub instance: Name,
    pub server: Name,
    pub light: bool,
    pub code: i32,
    pub next: Option<SimDuration>,
}

/// Appends a beat's event, `(t, actor, What::Nacos(NacosNote::Beat { .. }))`, as `encode`
/// would: for `encode_event`, and for a trace that only digests, which encodes a beat from its
/// fields without building the event (`Trace::record_beat`).
#[inline(always)]
pub fn encode_beat(t: SimTime, actor: Name, beat: BeatFields, out: &mut Vec<u8>) {
    let BeatFields { instance, server, light, code, next } = beat;
    let blocks = (actor.prefixed_block(), instance.prefixed_block(), server.prefixed_block());
    if let (Some(actor), Some(instance), Some(server)) = blocks {
        return encode_beat_in_room(t, [actor, instance, server], (light, code, next), out);
    }
    push_head(out, t, actor, NACOS_BEAT);
    push_name(out, instance);
    push_name(out, server);
    out.push(u8::from(light));
    out.extend_from_slice(&code.to_le_bytes());
    push_option(out, next, |out, d| out.extend_from_slice(&d.0.to_le_bytes()));
}

/// The most bytes a beat takes when its three names fit their blocks.
const BEAT_ROOM: usize = 8 + BLOCK + NACOS_BEAT.len() + 2 * BLOCK + 1 + 4 + 9;

/// A beat whose names all fit their blocks (every beat of a run with short names): the same
/// bytes, written into room made at once and then cut back to their end. Appended piece by
/// piece, each of the nine pieces checked the vector's capacity and moved its length: about 90
/// of the 145 instructions a beat's encoding took, in the one event nearly every Nacos run is
/// made of. Each name's block is copied whole, and the next piece starts where its text ends.
#[inline(always)]
fn encode_beat_in_room(
    t: SimTime,
    names: [(&[u8; BLOCK], usize); 3],
    (light, code, next): (bool, i32, Option<SimDuration>),
    out: &mut Vec<u8>,
) {
    let start = out.len();
    out.extend_from_slice(&[0; BEAT_ROOM]);
    let room: &mut [u8; BEAT_ROOM] = (&mut out[start..]).try_into().expect("the room just made");
    room[..8].copy_from_slice(&t.0.to_le_bytes());
    let [(actor, actor_len), (instance, instance_len), (server, server_len)] = names;
    room[8..8 + BLOCK].copy_from_slice(actor);
    let mut at = 8 + actor_len;
    room[at..at + NACOS_BEAT.len()].copy_from_slice(NACOS_BEAT);
    at += NACOS_BEAT.len();
    room[at..at + BLOCK].copy_from_slice(instance);
    at += instance_len;
    room[at..at + BLOCK].copy_from_slice(server);
    at += server_len;
    room[at] = u8::from(light);
    room[at + 1..at + 5].copy_from_slice(&code.to_le_bytes());
    at += 5;
    if let Some(d) = next {
        room[at] = 1;
        room[at + 1..at + 9].copy_from_slice(&d.0.to_le_bytes());
        at += 9;
    } else {
        at += 1; // the room's zero is `None`
    }
    out.truncate(start + at);
}

/// The tags of the hand-written events, as `push_str` writes them (tests hold them equal).
const NACOS_BEAT: &[u8] = b"\x05\0\0\0nacos\x04\0\0\0beat";
const RMQ_REGISTERED: &[u8] = b"\x03\0\0\0rmq\x0a\0\0\0registered";
const RMQ_REGISTER_SENT: &[u8] = b"\x03\0\0\0rmq\x0d\0\0\0register_sent";
const RMQ_SEND_DONE: &[u8] = b"\x03\0\0\0rmq\x09\0\0\0send_done";

/// Every event but a beat: a registration sent or accepted and a send ended by hand, the rest
/// through serde.
fn encode_other(t: SimTime, actor: Name, what: &What, out: &mut Vec<u8>) {
    match what {
        What::Rmq(RmqNote::Registered(r)) => encode_registered(t, actor, r, out),
        What::Rmq(RmqNote::RegisterSent { reason, namesrvs, topics, version, id }) => {
            push_head(out, t, actor, RMQ_REGISTER_SENT);
            // A unit variant is its index (the declaration order).
            out.extend_from_slice(&(*reason as u32).to_le_bytes());
            out.extend_from_slice(&(namesrvs.len() as u32).to_le_bytes());
            for ns in namesrvs.iter() {
                push_str(out, ns);
            }
            out.extend_from_slice(&(*topics as u64).to_le_bytes());
            push_bytes(out, version.text_bytes(&mut [0; DataVersion::TEXT_MAX]));
            out.extend_from_slice(&id.to_le_bytes());
        }
        What::Rmq(RmqNote::SendDone { producer, send, ok, attempts, broker, queue, elapsed, result }) => {
            push_head(out, t, actor, RMQ_SEND_DONE);
            push_name(out, *producer);
            out.extend_from_slice(&send.to_le_bytes());
            out.push(u8::from(*ok));
            out.extend_from_slice(&attempts.to_le_bytes());
            push_option(out, *broker, push_name);
            push_option(out, *queue, |out, queue| out.extend_from_slice(&queue.to_le_bytes()));
            out.extend_from_slice(&elapsed.0.to_le_bytes());
            push_str(out, result);
        }
        _ => encode(&(t, actor, what), out),
    }
}

/// `RmqNote::Registered`, as `encode` writes it: the two tags, then `Registration`'s fields in
/// their order, the label `brokerName[id]@addr` among them, built in place.
fn encode_registered(t: SimTime, actor: Name, r: &Registration, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let id = decimal(r.id, &mut digits);
    let names = [actor, r.broker_name, r.addr, r.cluster].map(|n| n.prefixed_block());
    if let [Some(actor), Some(name), Some(addr), Some(cluster)] = names {
        registered_in_room(t, [actor, name, addr, cluster], id, r, out);
    } else {
        push_head(out, t, actor, RMQ_REGISTERED);
        let label = r.broker_name.len() + 1 + id.len() + 2 + r.addr.len();
        out.extend_from_slice(&(label as u32).to_le_bytes());
        for part in [r.broker_name.as_bytes(), b"[", id, b"]@", r.addr.as_bytes()] {
            out.extend_from_slice(part);
        }
        for name in [r.cluster, r.addr, r.broker_name] {
            push_name(out, name);
        }
        out.extend_from_slice(&r.id.to_le_bytes());
        out.extend_from_slice(&r.channel.0.to_le_bytes());
        out.push(u8::from(r.first));
        out.push(u8::from(r.new_channel));
        out.extend_from_slice(&(r.topics_updated.len() as u32).to_le_bytes());
    }
    for topic in &r.topics_updated {
        push_str(out, topic);
    }
    out.extend_from_slice(&r.timeout.0.to_le_bytes());
}

/// The most bytes a registration takes up to its topics when its four names fit their blocks:
/// the time, the actor, the tags, the label (its length, two names' texts, the id's digits and
/// three marks), three names, the id, the channel and three more fields.
const REGISTERED_ROOM: usize = 8 + BLOCK + RMQ_REGISTERED.len() + (4 + 2 * BLOCK + 20 + 3) + 3 * BLOCK + 8 + 8 + 2 + 4;

/// A registration whose names all fit their blocks (every broker of a run with short names), up
/// to its topics, written as `encode_beat_in_room` writes a beat. Every broker's registration
/// makes one at each name server. Appended piece by piece, with the label's names copied from
/// their texts (which live apart from the names' entries, a cold line each), its encoding took
/// about 400 instructions and a cache miss in the RocketMQ bench. A name's text alone is its
/// block past the length's four bytes.
#[inline(always)]
fn registered_in_room(t: SimTime, names: [(&[u8; BLOCK], usize); 4], id: &[u8], r: &Registration, out: &mut Vec<u8>) {
    let [(actor, actor_used), (name, name_used), (addr, addr_used), (cluster, cluster_used)] = names;
    let label = (name_used - 4) + 1 + id.len() + 2 + (addr_used - 4);
    let start = out.len();
    out.extend_from_slice(&[0; REGISTERED_ROOM]);
    let room: &mut [u8; REGISTERED_ROOM] = (&mut out[start..]).try_into().expect("the room just made");
    room[..8].copy_from_slice(&t.0.to_le_bytes());
    room[8..8 + BLOCK].copy_from_slice(actor);
    let mut at = 8 + actor_used;
    room[at..at + RMQ_REGISTERED.len()].copy_from_slice(RMQ_REGISTERED);
    at += RMQ_REGISTERED.len();
    room[at..at + 4].copy_from_slice(&(label as u32).to_le_bytes());
    at += 4;
    room[at..at + BLOCK - 4].copy_from_slice(&name[4..]);
    at += name_used - 4;
    room[at] = b'[';
    at += 1;
    for &digit in id {
        room[at] = digit;
        at += 1;
    }
    room[at..at + 2].copy_from_slice(b"]@");
    at += 2;
    room[at..at + BLOCK - 4].copy_from_slice(&addr[4..]);
    at += addr_used - 4;
    for (block, used) in [(cluster, cluster_used), (addr, addr_used), (name, name_used)] {
        room[at..at + BLOCK].copy_from_slice(block);
        at += used;
    }
    room[at..at + 8].copy_from_slice(&r.id.to_le_bytes());
    room[at + 8..at + 16].copy_from_slice(&r.channel.0.to_le_bytes());
    room[at + 16] = u8::from(r.first);
    room[at + 17] = u8::from(r.new_channel);
    room[at + 18..at + 22].copy_from_slice(&(r.topics_updated.len() as u32).to_le_bytes());
    out.truncate(start + at + 22);
}

/// Appends what every hand-written event begins with: its time, its actor and its two tags.
#[inline(always)]
fn push_head(out: &mut Vec<u8>, t: SimTime, actor: Name, tags: &[u8]) {
    out.extend_from_slice(&t.0.to_le_bytes());
    push_name(out, actor);
    out.extend_from_slice(tags);
}

/// Appends an `Option` as `encode` does: a `0` byte, or a `1` byte and the value.
#[inline(always)]
fn push_option<T>(out: &mut Vec<u8>, value: Option<T>, push: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            push(out, v);
        }
    }
}

/// Appends a name as a string: its length, then its text (`Name::length_prefixed`). A short
/// name goes as one fixed-width block, then the vector is cut back to the name's end.
#[inline(always)]
fn push_name(out: &mut Vec<u8>, name: Name) {
    match name.prefixed_block() {
        Some((block, used)) => {
            let end = out.len() + used;
            out.extend_from_slice(block);
            out.truncate(end);
        }
        None => out.extend_from_slice(name.length_prefixed()),
    }
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    push_bytes(out, s.as_bytes());
}

/// `push_str` of a string's bytes.
fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

/// Serialization into a `Vec` cannot fail; serde still wants an error type.
#[derive(Debug)]
pub struct Never;

impl fmt::Display for Never {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot happen")
    }
}

impl std::error::Error for Never {}

impl ser::Error for Never {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Never
    }
}

impl Encoder<'_> {
    #[inline]
    fn len(&mut self, n: usize) {
        self.out.extend_from_slice(&(n as u32).to_le_bytes());
    }

    #[inline]
    fn variant(&mut self, index: u32) {
        self.out.extend_from_slice(&index.to_le_bytes());
    }
}

/// A sequence or map: its count is written up front when serde knows it, else patched in at the
/// end over four reserved bytes.
struct Compound<'a, 'b> {
    enc: &'b mut Encoder<'a>,
    patch: Option<(usize, u32)>,
}

impl<'a, 'b> Compound<'a, 'b> {
    fn new(enc: &'b mut Encoder<'a>, len: Option<usize>) -> Self {
        match len {
            Some(n) => {
                enc.len(n);
                Compound { enc, patch: None }
            }
            None => {
                let at = enc.out.len();
                enc.out.extend_from_slice(&[0; 4]);
                Compound { enc, patch: Some((at, 0)) }
            }
        }
    }

    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        if let Some((_, count)) = &mut self.patch {
            *count += 1;
        }
        value.serialize(&mut *self.enc)
    }

    fn finish(self) -> Result<(), Never> {
        if let Some((at, count)) = self.patch {
            self.enc.out[at..at + 4].copy_from_slice(&count.to_le_bytes());
        }
        Ok(())
    }
}

/// Writes fixed-width little-endian bytes for each listed primitive.
macro_rules! fixed {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        #[inline]
        fn $method(self, v: $ty) -> Result<(), Never> {
            self.out.extend_from_slice(&v.to_le_bytes());
            Ok(())
        }
    )*};
}

impl<'a, 'b> ser::Serializer for &'b mut Encoder<'a> {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Compound<'a, 'b>;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Compound<'a, 'b>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fixed!(
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_i128: i128,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_u128: u128,
        serialize_f32: f32, serialize_f64: f64,
    );

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<(), Never> {
        self.out.push(u8::from(v));
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Never> {
        self.serialize_u32(u32::from(v))
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), Never> {
        self.serialize_bytes(v.as_bytes())
    }

    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Never> {
        self.len(v.len());
        self.out.extend_from_slice(v);
        Ok(())
    }

    #[inline]
    fn serialize_none(self) -> Result<(), Never> {
        self.out.push(0);
        Ok(())
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Never> {
        self.out.push(1);
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Never> {
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Never> {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, index: u32, _: &'static str) -> Result<(), Never> {
        self.variant(index);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Never> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Never> {
        self.variant(index);
        value.serialize(self)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, 'b>, Never> {
        Ok(Compound::new(self, len))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self, Never> {
        Ok(self)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self)
    }

    fn serialize_tuple_variant(self, _: &'static str, index: u32, _: &'static str, _: usize) -> Result<Self, Never> {
        self.variant(index);
        Ok(self)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, 'b>, Never> {
        Ok(Compound::new(self, len))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self)
    }

    fn serialize_struct_variant(self, _: &'static str, index: u32, _: &'static str, _: usize) -> Result<Self, Never> {
        self.variant(index);
        Ok(self)
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Never;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        self.item(value)
    }
    fn end(self) -> Result<(), Never> {
        self.finish()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Never;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Never> {
        self.item(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Never> {
        // The count is of entries: keys were counted.
        value.serialize(&mut *self.enc)
    }
    fn end(self) -> Result<(), Never> {
        self.finish()
    }
}

/// Tuples, structs and their variants: the fields in order.
macro_rules! fields {
    ($($trait:ident :: $method:ident ($($name:ty)?)),* $(,)?) => {$(
        impl ser::$trait for &mut Encoder<'_> {
            type Ok = ();
            type Error = Never;
            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, $(_: $name,)? value: &T) -> Result<(), Never> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), Never> {
                Ok(())
            }
        }
    )*};
}

fields!(
    SerializeTuple::serialize_element(),
    SerializeTupleStruct::serialize_field(),
    SerializeTupleVariant::serialize_field(),
    SerializeStruct::serialize_field(&'static str),
    SerializeStructVariant::serialize_field(&'static str),
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    fn bytes<T: Serialize>(v: &T) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, &mut out);
        out
    }

    #[derive(Serialize)]
    #[serde(tag = "kind")]
    enum Tagged {
        A { x: u8 },
        B { x: u8 },
    }

    #[test]
    fn values_that_differ_encode_differently() {
        // A string boundary cannot slide: ("ab", "c") and ("a", "bc") differ.
        assert_ne!(bytes(&("ab", "c")), bytes(&("a", "bc")));
        assert_ne!(bytes(&Some(0u8)), bytes(&None::<u8>));
        assert_ne!(bytes(&Tagged::A { x: 1 }), bytes(&Tagged::B { x: 1 }));
        assert_ne!(bytes(&vec![1u8, 2]), bytes(&vec![1u8]));
    }

    #[test]
    fn the_hand_written_beat_is_byte_for_byte_what_serde_writes() {
        use crate::sim::clock::SimDuration;
        // Names copied as a fixed-width block (up to 28 bytes of text), at its edge, and past it:
        // all three in blocks (written into room made at once), or one too long for its block.
        let edge = "e".repeat(28);
        let long = "l".repeat(29);
        let cases = [
            (true, 10200, Some(SimDuration(5000)), "orders-1", "app1"),
            (false, 20404, None, edge.as_str(), edge.as_str()),
            (false, 20404, None, edge.as_str(), long.as_str()),
            (true, 10200, None, long.as_str(), edge.as_str()),
        ];
        for (light, code, next, instance, actor) in cases {
            let what =
                What::Nacos(NacosNote::Beat { instance: instance.into(), server: "nacos1".into(), light, code, next });
            // Something before the event: the block's copy starts mid-vector.
            let mut fast = vec![9];
            encode_event(SimTime(1234), Name::new(actor), &what, &mut fast);
            let mut slow = vec![9];
            slow.extend(bytes(&(SimTime(1234), actor, &what)));
            assert_eq!(fast, slow);
        }
    }

    #[test]
    fn the_hand_written_registration_is_byte_for_byte_what_serde_writes() {
        use crate::sim::clock::SimDuration;
        use crate::sim::ids::ChannelId;
        // Names that fit their blocks, exactly fill them (28 bytes of text), and overflow them.
        let names = [
            ("broker-a", "10.0.0.1:10911"),
            ("broker-with-a-28-byte-name-x", "10.0.0.1:10911"),
            ("broker-a", "a-very-long-host-name.example.com:10911"),
            ("broker-with-a-name-of-more-than-28-bytes", "10.200.200.200:10911"),
        ];
        let cases = [(0, vec![]), (1, vec!["T".to_string(), "TBW102".to_string()]), (u64::MAX, vec![])];
        for ((id, topics), (broker_name, addr)) in cases.into_iter().flat_map(|c| names.map(move |n| (c.clone(), n))) {
            let r = Registration {
                cluster: "DefaultCluster".into(),
                addr: addr.into(),
                broker_name: broker_name.into(),
                id,
                channel: ChannelId(7),
                first: id == 0,
                new_channel: id == 1,
                topics_updated: topics,
                timeout: SimDuration(120_000),
            };
            let what = What::Rmq(RmqNote::Registered(r));
            let mut fast = Vec::new();
            encode_event(SimTime(1234), Name::new("ns1"), &what, &mut fast);
            assert_eq!(fast, bytes(&(SimTime(1234), "ns1", &what)), "id {id}, {broker_name}, {addr}");
        }
    }

    #[test]
    fn the_hand_written_register_sent_is_byte_for_byte_what_serde_writes() {
        use crate::rocketmq::notes::RegisterReason;
        for reason in [RegisterReason::Startup, RegisterReason::Periodic, RegisterReason::ChosenVersion] {
            let what = What::Rmq(RmqNote::RegisterSent {
                reason,
                namesrvs: vec!["ns1".to_string(), "ns2".to_string()].into(),
                topics: 103,
                version: DataVersion { state_version: 0, timestamp: SimTime(1_000), counter: 1 },
                id: 1,
            });
            let mut fast = Vec::new();
            encode_event(SimTime(30_000), Name::new("a0"), &what, &mut fast);
            assert_eq!(fast, bytes(&(SimTime(30_000), "a0", &what)), "{reason:?}");
        }
    }

    #[test]
    fn the_hand_written_send_done_is_byte_for_byte_what_serde_writes() {
        use crate::sim::clock::SimDuration;
        let ends = [
            (true, Some(Name::new("broker-a")), Some(3), "SEND_OK".into()),
            (false, None, None, "No route info of this topic".into()),
            (
                false,
                Some(Name::new("broker-with-a-name-past-28-bytes")),
                Some(0),
                "sendDefaultImpl call timeout".into(),
            ),
        ];
        for (ok, broker, queue, result) in ends {
            let what = What::Rmq(RmqNote::SendDone {
                producer: Name::new("p1"),
                send: 42,
                ok,
                attempts: 3,
                broker,
                queue,
                elapsed: SimDuration(2_999),
                result,
            });
            let mut fast = Vec::new();
            encode_event(SimTime(61_000), Name::new("c1"), &what, &mut fast);
            assert_eq!(fast, bytes(&(SimTime(61_000), "c1", &what)), "{what:?}");
        }
    }

    #[test]
    fn a_sequence_of_unknown_length_gets_its_count_patched_in() {
        struct Unsized(Vec<u16>);
        impl Serialize for Unsized {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().filter(|_| true))
            }
        }
        assert_eq!(bytes(&Unsized(vec![7, 9])), bytes(&vec![7u16, 9]));
        assert_eq!(bytes(&vec![7u16, 9]), [2, 0, 0, 0, 7, 0, 9, 0]);
    }
}
