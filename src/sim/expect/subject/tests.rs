use super::*;

fn queue(name: &str, perm: u32) -> Rc<QueueData> {
    Rc::new(QueueData {
        broker_name: Name::new(name),
        read_queue_nums: 4,
        write_queue_nums: 4,
        perm,
        topic_sys_flag: 0,
    })
}

/// The one-pass pick must give what a stable sort of the whole route starts with: the
/// smallest names, and among equal names (a route built from duplicated registrations
/// can repeat one) the first in route order.
#[test]
fn the_first_groups_by_name_are_a_stable_sorts_first() {
    let names = ["g07", "g03", "g09", "g03", "g01", "g05", "g01", "g08", "g02", "g03", "g04", "g06"];
    // The position in the route rides in `perm`, so ties can be told apart.
    let route: Vec<_> = names.iter().enumerate().map(|(i, n)| queue(n, i as u32)).collect();
    let mut sorted: Vec<&QueueData> = route.iter().map(|q| &**q).collect();
    sorted.sort_by_key(|q| q.broker_name);
    for max in 0..=route.len() + 1 {
        let picked: Vec<_> = first_by_name(&route, max).iter().map(|q| (q.broker_name, q.perm)).collect();
        let want: Vec<_> = sorted.iter().take(max).map(|q| (q.broker_name, q.perm)).collect();
        assert_eq!(picked, want, "the first {max}");
    }
}

/// The one pass from the end must find what a search from the end for each name finds:
/// the last `BrokerData` of the name, the same one for a name listed twice, none for a
/// name without one.
#[test]
fn each_group_gets_the_last_broker_data_of_its_name() {
    // The position in the route rides in `zone_name`, so equal names can be told apart.
    let data =
        |name: &str, at: usize| Rc::new(BrokerData { zone_name: Some(at.to_string()), ..BrokerData::new("c", name) });
    let datas: Vec<_> = ["g1", "g2", "g1", "g3", "g2", "g5"].iter().enumerate().map(|(i, n)| data(n, i)).collect();
    let queues = [queue("g2", 0), queue("g4", 0), queue("g1", 0), queue("g2", 0), queue("g5", 0)];
    for n in 0..=queues.len() {
        let picked: Vec<&QueueData> = queues[..n].iter().map(|q| &**q).collect();
        let found: Vec<_> = last_data_of_each(&datas, &picked).iter().map(|d| d.map(|d| d.zone_name.clone())).collect();
        let want: Vec<_> = picked
            .iter()
            .map(|q| datas.iter().rfind(|d| d.broker_name == q.broker_name).map(|d| d.zone_name.clone()))
            .collect();
        assert_eq!(found, want, "the first {n} groups");
    }
    let found = last_data_of_each(&datas, &queues.iter().map(|q| &**q).collect::<Vec<_>>());
    assert_eq!(found[0].and_then(|d| d.zone_name.as_deref()), Some("4"), "the later of g2's two");
    assert!(found[1].is_none(), "g4 has none");
}
