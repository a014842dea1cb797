//! The model's name-server inputs as the real server's requests: headers and JSON bodies.
//!
//! Field names are Java's (`RegisterBrokerRequestHeader`, `UnRegisterBrokerRequestHeader`,
//! `WipeWritePermOfBrokerRequestHeader`, `AddWritePermOfBrokerRequestHeader`,
//! `DeleteTopicFromNamesrvRequestHeader`, `RegisterTopicRequestHeader`,
//! `QueryDataVersionRequestHeader`), checked against the Rust port's `rocketmq-protocol` 1.0.0.

use crate::wire::code;
use routesim::rocketmq::types::{DataVersion, QueueData, RegisterBrokerRequest, UnregisterRequest};
use serde_json::{json, Value};

/// A request to send: code, header fields, body.
pub struct Req {
    pub code: i32,
    /// Sent with the oneway flag: the name server answers nothing.
    pub oneway: bool,
    pub fields: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

fn data_version(v: &DataVersion) -> Value {
    json!({ "stateVersion": v.state_version, "timestamp": v.timestamp.millis(), "counter": v.counter })
}

/// REGISTER_BROKER. `timeout_ms` is the broker's `heartbeatTimeoutMillis` already scaled: the
/// only expiry clock a broker can set on the name server, which is how expiry is sped up.
pub fn register(r: &RegisterBrokerRequest, timeout_ms: u64) -> Req {
    let mut fields = vec![
        ("brokerName", r.broker_name.to_string()),
        ("brokerAddr", r.broker_addr.to_string()),
        ("clusterName", r.cluster_name.to_string()),
        ("haServerAddr", r.ha_server_addr.to_string()),
        ("brokerId", r.broker_id.to_string()),
        ("heartbeatTimeoutMillis", timeout_ms.to_string()),
        ("compressed", "false".into()),
        // 0: "no checksum" (`DefaultRequestProcessor#checksum` skips it).
        ("bodyCrc32", "0".into()),
    ];
    if let Some(acting) = r.enable_acting_master {
        fields.push(("enableActingMaster", acting.to_string()));
    }
    if let Some(zone) = &r.zone_name {
        fields.push(("zoneName", zone.clone()));
    }
    let (table, version) = match &r.topic_config_wrapper {
        Some(w) => {
            let table: serde_json::Map<String, Value> = w
                .topic_config_table
                .values()
                .map(|t| {
                    let v = json!({
                        "topicName": t.topic_name, "readQueueNums": t.read_queue_nums,
                        "writeQueueNums": t.write_queue_nums, "perm": t.perm,
                        "topicFilterType": "SINGLE_TAG", "topicSysFlag": t.topic_sys_flag,
                        "order": false, "attributes": {}
                    });
                    (t.topic_name.clone(), v)
                })
                .collect();
            (Value::Object(table), data_version(&w.data_version))
        }
        None => (json!({}), data_version(&DataVersion::default())),
    };
    // `RegisterBrokerBody`: a `TopicConfigAndMappingSerializeWrapper` (no static topics here)
    // and the filter servers.
    let body = json!({
        "topicConfigSerializeWrapper": {
            "topicConfigTable": table,
            "dataVersion": version,
            "topicQueueMappingInfoMap": {},
            "topicQueueMappingDetailMap": {},
            "mappingDataVersion": { "stateVersion": 0, "timestamp": 0, "counter": 0 }
        },
        "filterServerList": r.filter_server_list.clone().unwrap_or_default()
    });
    Req { code: code::REGISTER_BROKER, oneway: false, fields, body: body.to_string().into_bytes() }
}

pub fn unregister(r: &UnregisterRequest) -> Req {
    let fields = vec![
        ("brokerName", r.broker_name.to_string()),
        ("brokerAddr", r.broker_addr.to_string()),
        ("clusterName", r.cluster_name.to_string()),
        ("brokerId", r.broker_id.to_string()),
    ];
    Req { code: code::UNREGISTER_BROKER, oneway: false, fields, body: Vec::new() }
}

/// QUERY_DATA_VERSION: the acting-master broker's lightweight heartbeat, oneway as the model
/// sends it (`BrokerOuterAPI#sendHeartbeatViaDataVersion`).
pub fn query_data_version(cluster: &str, addr: &str, name: &str, id: u64, v: &DataVersion) -> Req {
    let fields = vec![
        ("brokerName", name.to_string()),
        ("brokerAddr", addr.to_string()),
        ("clusterName", cluster.to_string()),
        ("brokerId", id.to_string()),
    ];
    Req { code: code::QUERY_DATA_VERSION, oneway: true, fields, body: data_version(v).to_string().into_bytes() }
}

pub fn wipe_write_perm(broker_name: &str) -> Req {
    Req {
        code: code::WIPE_WRITE_PERM_OF_BROKER,
        oneway: false,
        fields: vec![("brokerName", broker_name.into())],
        body: vec![],
    }
}

pub fn add_write_perm(broker_name: &str) -> Req {
    Req {
        code: code::ADD_WRITE_PERM_OF_BROKER,
        oneway: false,
        fields: vec![("brokerName", broker_name.into())],
        body: vec![],
    }
}

pub fn delete_topic(topic: &str, cluster: Option<&str>) -> Req {
    let mut fields = vec![("topic", topic.to_string())];
    if let Some(c) = cluster {
        fields.push(("clusterName", c.to_string()));
    }
    Req { code: code::DELETE_TOPIC_IN_NAMESRV, oneway: false, fields, body: vec![] }
}

/// REGISTER_TOPIC_IN_NAMESRV: the body is a `TopicRouteData` of which only `queueDatas` is read.
pub fn register_topic(topic: &str, queues: &[QueueData]) -> Req {
    let qs: Vec<Value> = queues
        .iter()
        .map(|q| {
            json!({ "brokerName": q.broker_name, "readQueueNums": q.read_queue_nums,
                    "writeQueueNums": q.write_queue_nums, "perm": q.perm, "topicSysFlag": q.topic_sys_flag })
        })
        .collect();
    let body = json!({ "queueDatas": qs, "brokerDatas": [], "filterServerTable": {} });
    Req {
        code: code::REGISTER_TOPIC_IN_NAMESRV,
        oneway: false,
        fields: vec![("topic", topic.to_string())],
        body: body.to_string().into_bytes(),
    }
}

/// GET_BROKER_CLUSTER_INFO: no header, no body (`DefaultRequestProcessor#getBrokerClusterInfo`).
pub fn get_cluster_info() -> Req {
    Req { code: code::GET_BROKER_CLUSTER_INFO, oneway: false, fields: vec![], body: vec![] }
}

pub fn get_route(topic: &str) -> Req {
    Req { code: code::GET_ROUTEINFO_BY_TOPIC, oneway: false, fields: vec![("topic", topic.to_string())], body: vec![] }
}
