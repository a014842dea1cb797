//! What travels over the network: a packet with a body of some protocol, or a notice the network
//! itself writes (a channel closed, a connection failed).

use crate::nacos::wire::NacosMsg;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::ids::{ChannelId, MsgId, NodeId};
use crate::sim::network::ConnectFailure;

#[derive(Debug)]
pub struct Packet {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    pub channel: ChannelId,
    pub body: Body,
}

impl Packet {
    /// Drops a handled packet, without the drop glue's call when its body owns nothing (see
    /// [`NacosMsg::owns_nothing`]): nothing is left undone by forgetting it.
    #[inline(always)]
    pub fn discard(self) {
        if matches!(&self.body, Body::Nacos(m) if m.owns_nothing()) {
            std::mem::forget(self);
        }
    }
}

#[derive(Debug)]
pub enum Body {
    Rmq(RmqMsg),
    Nacos(NacosMsg),
    Notice(Notice),
}

impl Body {
    /// The protocol name of the message (`REGISTER_BROKER`, `beat`, ...), for trace lines.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Rmq(m) => m.code_name(),
            Body::Nacos(m) => m.kind(),
            Body::Notice(_) => "notice",
        }
    }
}

/// How a channel ended, as its owner hears of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseKind {
    /// This end closed it itself (Netty fires `channelInactive` on the closing side too).
    Local,
    /// The peer closed it and the FIN arrived.
    Fin,
    /// A packet bounced off a closed end.
    Reset,
    /// Netty's `IdleStateHandler` closed it after no I/O for the idle time.
    Idle,
    /// The kernel gave up retransmitting (`tcp_retries2`): the read fails with ETIMEDOUT.
    TimedOut,
}

#[derive(Debug)]
pub enum Notice {
    ChannelClosed {
        channel: ChannelId,
        peer: NodeId,
        kind: CloseKind,
    },
    /// A packet could not be sent because no connection could be opened.
    SendFailed {
        msg: MsgId,
        to: NodeId,
        reason: ConnectFailure,
    },
}
