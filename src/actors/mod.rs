//! The actors: thin actix wrappers around the pure cores, one per file.
//!
//! | actor | wraps | RocketMQ / Nacos counterpart |
//! |---|---|---|
//! | [`network::NetworkActor`] | `sim::network`, `sim::agenda` | the wire, and virtual time |
//! | [`director::Director`] | the scenario timeline | the operator and the data centre |
//! | [`broker::Broker`] | `rocketmq::broker` | `BrokerController` registration tasks |
//! | [`namesrv::RouteTable`] | `rocketmq::route_table` | `DefaultRequestProcessor`, `BrokerHousekeepingService` |
//! | [`scanner::Scanner`] | `RouteInfoManager::scan_not_active_broker` | `scanNotActiveBroker` task |
//! | [`batcher::Batcher`] | `rocketmq::batch` | `BatchUnregistrationService` |
//! | [`route_client::RouteClient`] | `rocketmq::client` | `MQClientInstance` route refresh |

pub mod batcher;
pub mod broker;
pub mod director;
pub mod env;
pub mod namesrv;
pub mod network;
pub mod route_client;
pub mod scanner;
