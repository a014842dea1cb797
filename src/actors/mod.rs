//! The actors: thin actix wrappers around the pure cores, one per file.
//!
//! | actor | wraps | RocketMQ / Nacos counterpart |
//! |---|---|---|
//! | [`director::Director`] | the scenario timeline | the operator and the data centre |
//! | [`broker::Broker`] | `rocketmq::broker` | `BrokerController` registration tasks |
//! | [`namesrv::RouteTable`] | `rocketmq::route_table` | `DefaultRequestProcessor`, `BrokerHousekeepingService` |
//! | [`scanner::Scanner`] | `RouteInfoManager::scan_not_active_broker` | `scanNotActiveBroker` task |
//! | [`batcher::Batcher`] | `rocketmq::batch` | `BatchUnregistrationService` |
//! | [`route_client::RouteClient`] | `rocketmq::client` | `MQClientInstance` route refresh |
//! | [`producer::Producers`] | `rocketmq::producer` | `DefaultMQProducerImpl#sendDefaultImpl`, `MQFaultStrategy` |
//! | [`nacos_server::NacosServer`] | `nacos::naming`, `nacos::push` | `InstanceController`, `PushDelayTaskExecuteEngine` |
//! | [`nacos_health::HealthChecker`] | `nacos::health` | `ClientBeatCheckTaskV2`, `ExpiredClientCleaner` |
//! | [`nacos_app::NacosApp`] | `nacos::beat`, `nacos::http` | `NacosNamingService`, `BeatReactor`, `NamingProxy` |
//! | [`nacos_subscriber::NacosSubscriber`] | `nacos::subscriber` | 1.x `HostReactor`, `PushReceiver` |
//! | [`nacos_grpc_client::GrpcApp`] | `nacos::grpc` | 2.x `RpcClient`, `NamingGrpcClientProxy`, `NamingGrpcRedoService` |
//!
//! `network` is not an actor: it is the wire and the clock under them (`sim::network`,
//! `sim::agenda`). Actors hand it packets and timers through `Net`, synchronously, as a process
//! writes to a socket; its driver, which runs whenever every actor is idle, hands them back as actix messages.
//! `nacos_http` is not an actor: it is the `reqApi` plumbing the two Nacos client actors share;
//! `nacos_member` is a clustered server's `MemberInfoReportTask` (`nacos::cluster`), run inside
//! the server actor, whose endpoint receives the reports' answers; `nacos_grpc_server` is the
//! server's `ConnectionManager` and ejector (`nacos::grpc::connections`), run inside it too, as is
//! `nacos_distro`, a cluster member's Distro sync and verify for its gRPC clients;
//! `remoting` is RocketMQ's `NettyRemotingClient` (`invokeSync` and its timeouts), shared by the
//! broker, route-client and producer actors.
//! `runtime` is not an actor either: it is the run's executor, which polls every actor's actix
//! context in the order tokio's `LocalSet` would, without tokio's thread-safe task machinery;
//! `inbox` is each actor's address and the queue its messages wait in, without actix's
//! thread-safe mailbox.

pub mod batcher;
pub mod broker;
pub mod director;
pub mod env;
pub mod inbox;
pub mod nacos_app;
pub mod nacos_distro;
pub mod nacos_filter;
pub mod nacos_grpc_client;
pub mod nacos_grpc_server;
pub mod nacos_health;
pub mod nacos_http;
pub mod nacos_member;
pub mod nacos_server;
pub mod nacos_subscriber;
pub mod namesrv;
pub mod network;
pub mod producer;
pub mod remoting;
pub mod route_client;
pub mod runtime;
pub mod scanner;

crate::packet_endpoint!(
    broker::Broker,
    namesrv::RouteTable,
    route_client::RouteClient,
    producer::Producers,
    nacos_server::NacosServer,
    nacos_app::NacosApp,
    nacos_grpc_client::GrpcApp,
    nacos_subscriber::NacosSubscriber,
);

// The actors the network does not deliver to; `packet_endpoint!` covers the rest.
crate::local_actor!(
    endpoints: ;
    parts: director::Director, scanner::Scanner, batcher::Batcher, nacos_health::HealthChecker,
);
