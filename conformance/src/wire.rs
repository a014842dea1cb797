//! The RocketMQ remoting frame, JSON flavour: pure encoding and decoding, no sockets.
//!
//! ```text
//!  ┌──────────────┬─────────────────────────────┬──────────────┬──────┐
//!  │ length (BE32)│ type<<24 | header len (BE32)│ header (JSON)│ body │
//!  └──────────────┴─────────────────────────────┴──────────────┴──────┘
//!    length counts everything after itself: 4 + header + body
//! ```
//!
//! Java: `RemotingCommand#encodeHeader` and `RemotingCommand#decode`
//! (`remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java`); the
//! high byte of the second word is the `SerializeType` (0 JSON, 1 ROCKETMQ), the low three bytes
//! the header length. We always send JSON and accept only JSON back: the name server answers in
//! the type of the request (`serializeTypeCurrentRPC`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Request codes (`org.apache.rocketmq.remoting.protocol.RequestCode`).
pub mod code {
    pub const REGISTER_BROKER: i32 = 103;
    pub const UNREGISTER_BROKER: i32 = 104;
    pub const GET_ROUTEINFO_BY_TOPIC: i32 = 105;
    pub const GET_BROKER_CLUSTER_INFO: i32 = 106;
    pub const WIPE_WRITE_PERM_OF_BROKER: i32 = 205;
    pub const DELETE_TOPIC_IN_NAMESRV: i32 = 216;
    pub const REGISTER_TOPIC_IN_NAMESRV: i32 = 217;
    pub const QUERY_DATA_VERSION: i32 = 322;
    pub const ADD_WRITE_PERM_OF_BROKER: i32 = 327;
}

/// Response codes (`ResponseCode`, `RemotingSysResponseCode`) the driver looks at.
pub mod response {
    pub const SUCCESS: i32 = 0;
    pub const TOPIC_NOT_EXIST: i32 = 17;
}

/// `flag` bit 0: this is a response (`RemotingCommand#RPC_TYPE`).
pub const FLAG_RESPONSE: i32 = 1;
/// `flag` bit 1: the sender wants no answer (`RPC_ONEWAY`).
pub const FLAG_ONEWAY: i32 = 2;

/// `MQVersion.Version.V5_3_3.ordinal()`: the name server decodes a REGISTER_BROKER body as
/// `RegisterBrokerBody` only from V3_0_11 on, so the version must be a real, recent one.
pub const VERSION_5_3_3: i32 = 479;

/// The JSON header. Every custom header field travels as a string in `extFields`, as Java's
/// `RemotingCommand#makeCustomHeaderToNet` writes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    pub code: i32,
    #[serde(default)]
    pub language: String,
    #[serde(default)]
    pub version: i32,
    pub opaque: i32,
    #[serde(default)]
    pub flag: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remark: Option<String>,
    /// The Rust port answers `"extFields": null` when a response has no custom header.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub ext_fields: BTreeMap<String, String>,
    #[serde(rename = "serializeTypeCurrentRPC", default = "json_type")]
    pub serialize_type: String,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    Ok(Option::<BTreeMap<String, String>>::deserialize(d)?.unwrap_or_default())
}

fn json_type() -> String {
    "JSON".into()
}

/// One command: a request or a response.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub header: Header,
    pub body: Vec<u8>,
}

impl Frame {
    /// A request with `fields` as its custom header.
    pub fn request(code: i32, opaque: i32, fields: &[(&str, String)], body: Vec<u8>) -> Frame {
        let header = Header {
            code,
            language: "JAVA".into(),
            version: VERSION_5_3_3,
            opaque,
            flag: 0,
            remark: None,
            ext_fields: fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            serialize_type: json_type(),
        };
        Frame { header, body }
    }

    pub fn oneway(mut self) -> Frame {
        self.header.flag |= FLAG_ONEWAY;
        self
    }

    pub fn is_response(&self) -> bool {
        self.header.flag & FLAG_RESPONSE != 0
    }

    /// The bytes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let header = serde_json::to_vec(&self.header).expect("a header of strings and numbers always serialises");
        let len = 4 + header.len() + self.body.len();
        let mut out = Vec::with_capacity(4 + len);
        out.extend_from_slice(&(len as u32).to_be_bytes());
        // Serialize type 0 (JSON) in the high byte: the word is just the header length.
        out.extend_from_slice(&(header.len() as u32 & 0x00FF_FFFF).to_be_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&self.body);
        out
    }

    /// Decodes what follows the length word (`frame` is `length` bytes long).
    pub fn decode(frame: &[u8]) -> Result<Frame, String> {
        if frame.len() < 4 {
            return Err(format!("a frame of {} bytes has no header length", frame.len()));
        }
        let word = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
        let (kind, header_len) = (word >> 24, (word & 0x00FF_FFFF) as usize);
        if kind != 0 {
            return Err(format!("serialize type {kind}: only JSON (0) is spoken here"));
        }
        let rest = &frame[4..];
        if header_len > rest.len() {
            return Err(format!("header length {header_len} is past the frame's {} bytes", rest.len()));
        }
        let header: Header =
            serde_json::from_slice(&rest[..header_len]).map_err(|e| format!("the header is not JSON: {e}"))?;
        Ok(Frame { header, body: rest[header_len..].to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_survives_encoding_and_decoding() {
        let f = Frame::request(code::GET_ROUTEINFO_BY_TOPIC, 7, &[("topic", "Orders".into())], b"body".to_vec());
        let bytes = f.encode();
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        assert_eq!(len, bytes.len() - 4, "the length word counts everything after itself");
        assert_eq!(Frame::decode(&bytes[4..]).unwrap(), f);
    }

    #[test]
    fn the_header_carries_fields_as_strings_under_ext_fields() {
        let f = Frame::request(code::WIPE_WRITE_PERM_OF_BROKER, 1, &[("brokerName", "broker-a".into())], vec![]);
        let json: serde_json::Value = serde_json::from_slice(&f.encode()[8..]).unwrap();
        assert_eq!(json["extFields"]["brokerName"], "broker-a");
        assert_eq!(json["code"], 205);
        assert_eq!(json["serializeTypeCurrentRPC"], "JSON");
    }

    #[test]
    fn a_rocketmq_serialized_answer_is_refused_not_misread() {
        let mut bytes = Frame::request(1, 1, &[], vec![]).encode();
        bytes[4] = 1;
        assert!(Frame::decode(&bytes[4..]).unwrap_err().contains("serialize type 1"));
    }

    #[test]
    fn oneway_and_response_are_flag_bits() {
        let f = Frame::request(1, 1, &[], vec![]).oneway();
        assert_eq!(f.header.flag, FLAG_ONEWAY);
        assert!(!f.is_response());
    }
}
