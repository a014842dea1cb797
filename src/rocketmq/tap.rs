//! What reaches each name server, recorded for whoever replays it elsewhere.
//!
//! A conformance run (`routesim conform`, the `conformance/` crate) drives a *real* name server
//! with the inputs the modelled one received, at the same (scaled) instants, and compares the
//! routes the two serve. The model decides what the brokers, the network and the operator do;
//! the tap hands over what came out of all that at each name server's door: requests with their
//! full headers and bodies, channel closes, admin commands, and the process's own life. Nothing
//! in the model reads the tap: a run with one is the same run.

use crate::rocketmq::types::{DataVersion, QueueData, RegisterBrokerRequest, UnregisterRequest};
use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, ProcState};
use std::sync::Arc;

/// One input of one name server.
#[derive(Clone, Debug)]
pub enum Input {
    /// REGISTER_BROKER arrived on `channel`.
    Register { channel: ChannelId, request: Arc<RegisterBrokerRequest> },
    /// QUERY_DATA_VERSION (the acting-master broker's lightweight heartbeat) arrived.
    Heartbeat {
        channel: ChannelId,
        cluster: String,
        addr: String,
        broker_name: String,
        broker_id: u64,
        data_version: DataVersion,
    },
    /// UNREGISTER_BROKER arrived from a broker shutting down.
    Unregister { channel: ChannelId, request: UnregisterRequest },
    /// The name server's end of `channel` went inactive (the peer's FIN, a reset, its own idle
    /// close): `BrokerHousekeepingService` hears of it now.
    ChannelClosed { channel: ChannelId, idle: bool },
    /// An operator's `mqadmin` command.
    Admin(AdminInput),
    /// The process started, stopped or hung (every process: a tap keeps those it cares for).
    Process(ProcState),
}

/// The admin requests an `[[action]]` becomes.
#[derive(Clone, Debug)]
pub enum AdminInput {
    WipeWritePerm(String),
    AddWritePerm(String),
    DeleteTopic { topic: String, cluster: Option<String> },
    RegisterTopic { topic: String, queues: Vec<QueueData> },
    Unregister(UnregisterRequest),
}

/// Receives every input of every name server, in the order the model handles them.
pub trait InputTap {
    fn input(&mut self, t: SimTime, namesrv: &str, input: Input);
}
