//! Cells of Services, Ingresses, IngressClasses, Endpoints and
//! EndpointSlices.

use std::collections::BTreeSet;

use serde_json::Value;

use super::cells::{int, items, list_with_more, str_at};

/// The most addresses, ports or hosts a cell lists before `+ N more...`.
const SHOWN: usize = 3;

/// The first of `spec.clusterIPs` (or the older `spec.clusterIP`), or
/// `<none>`; a headless Service shows `None`.
pub(crate) fn cluster_ip(service: &Value) -> String {
    items(service, &["spec", "clusterIPs"])
        .first()
        .and_then(Value::as_str)
        .or_else(|| str_at(service, &["spec", "clusterIP"]))
        .filter(|ip| !ip.is_empty())
        .unwrap_or("<none>")
        .to_string()
}

/// The external IPs as the printer shows them for each type of Service:
/// `spec.externalIPs` for ClusterIP and NodePort (or `<none>`); for a
/// LoadBalancer, the load balancer's addresses then `spec.externalIPs`,
/// `<pending>` while there are none; the external name of an
/// ExternalName Service. Tables are made for `-o wide` too, so long lists
/// are not cut.
pub(crate) fn external_ip(service: &Value) -> String {
    let external: Vec<&str> = strings(items(service, &["spec", "externalIPs"]));
    match str_at(service, &["spec", "type"]).unwrap_or("") {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".to_string(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            let mut all: Vec<String> =
                load_balancer(items(service, &["status", "loadBalancer", "ingress"]));
            all.extend(external.iter().map(|ip| ip.to_string()));
            if all.is_empty() {
                "<pending>".to_string()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => str_at(service, &["spec", "externalName"])
            .unwrap_or("")
            .to_string(),
        _ => "<unknown>".to_string(),
    }
}

fn strings(values: &[Value]) -> Vec<&str> {
    values.iter().filter_map(Value::as_str).collect()
}

/// The IP (or else hostname) of each load balancer ingress point, sorted
/// and without repeats.
fn load_balancer(ingress: &[Value]) -> Vec<String> {
    let set: BTreeSet<&str> = ingress
        .iter()
        .filter_map(|point| {
            let ip = str_at(point, &["ip"]).unwrap_or("");
            let host = str_at(point, &["hostname"]).unwrap_or("");
            [ip, host].into_iter().find(|s| !s.is_empty())
        })
        .collect();
    set.into_iter().map(str::to_string).collect()
}

/// `port/protocol`, or `port:nodePort/protocol`, comma-separated; `<none>`.
pub(crate) fn service_ports(service: &Value) -> String {
    let ports: Vec<String> = items(service, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = int(p.get("port"));
            let protocol = str_at(p, &["protocol"]).unwrap_or("");
            match int(p.get("nodePort")) {
                node_port if node_port > 0 => format!("{port}:{node_port}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    }
}

/// The first three hosts named by the rules, then `+ N more...` when a rule
/// follows the third host, N counting every rule past the third (as the
/// printer counts); `*` when no rule names a host.
pub(crate) fn ingress_hosts(ingress: &Value) -> String {
    let rules = items(ingress, &["spec", "rules"]);
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == SHOWN {
            more = true;
            break;
        }
        if let Some(host) = str_at(rule, &["host"]).filter(|h| !h.is_empty()) {
            hosts.push(host);
        }
    }
    if hosts.is_empty() {
        "*".to_string()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - SHOWN)
    } else {
        hosts.join(",")
    }
}

/// The load balancer's IPs or hostnames, sorted, comma-separated.
pub(crate) fn ingress_address(ingress: &Value) -> String {
    load_balancer(items(ingress, &["status", "loadBalancer", "ingress"])).join(",")
}

/// `80`, or `80, 443` when the Ingress has TLS.
pub(crate) fn ingress_ports(ingress: &Value) -> String {
    if items(ingress, &["spec", "tls"]).is_empty() {
        "80".to_string()
    } else {
        "80, 443".to_string()
    }
}

/// `Kind.apiGroup/name` of an IngressClass's parameters, or `<none>`.
pub(crate) fn ingress_class_parameters(class: &Value) -> String {
    let Some(parameters) = class.get("spec").and_then(|s| s.get("parameters")) else {
        return "<none>".to_string();
    };
    if parameters.is_null() {
        return "<none>".to_string();
    }
    let kind = str_at(parameters, &["kind"]).unwrap_or("");
    let name = str_at(parameters, &["name"]).unwrap_or("");
    match str_at(parameters, &["apiGroup"]) {
        Some(group) => format!("{kind}.{group}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// The first three `ip:port` of an Endpoints object's subsets (just `ip`
/// in a subset without ports), `+ N more...`; `<none>` without subsets.
pub(crate) fn endpoints(object: &Value) -> String {
    let subsets = items(object, &["subsets"]);
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut list = Vec::new();
    let mut total = 0;
    for subset in subsets {
        let addresses = items(subset, &["addresses"]);
        let ips = addresses.iter().map(|a| str_at(a, &["ip"]).unwrap_or(""));
        let ports = items(subset, &["ports"]);
        if ports.is_empty() {
            total += addresses.len();
            list.extend(
                ips.map(str::to_string)
                    .take(SHOWN.saturating_sub(list.len())),
            );
            continue;
        }
        for port in ports {
            total += addresses.len();
            let port = int(port.get("port"));
            for ip in ips.clone() {
                if list.len() == SHOWN {
                    break;
                }
                list.push(host_port(ip, port));
            }
        }
    }
    if total > SHOWN {
        format!("{} + {} more...", list.join(","), total - SHOWN)
    } else {
        list.join(",")
    }
}

/// `ip:port`, with brackets around an IPv6 address.
fn host_port(ip: &str, port: i64) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// The first three ports of an EndpointSlice: the number, else the name,
/// else `*`; `<unset>` when it has none.
pub(crate) fn slice_ports(slice: &Value) -> String {
    let ports = items(slice, &["ports"]);
    let list: Vec<String> = ports
        .iter()
        .take(SHOWN)
        .map(
            |p| match (p.get("port").and_then(Value::as_i64), str_at(p, &["name"])) {
                (Some(port), _) => port.to_string(),
                (None, Some(name)) => name.to_string(),
                (None, None) => "*".to_string(),
            },
        )
        .collect();
    list_with_more(&list, ports.len(), SHOWN, "<unset>")
}

/// The first three addresses of an EndpointSlice's endpoints, `<unset>`
/// when it has none.
pub(crate) fn slice_endpoints(slice: &Value) -> String {
    let addresses: Vec<String> = items(slice, &["endpoints"])
        .iter()
        .flat_map(|e| items(e, &["addresses"]))
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect();
    list_with_more(&addresses, addresses.len(), SHOWN, "<unset>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn services() {
        let cases: &[(Value, &str, &str, &str)] = &[
            (
                json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
                    "ports": [{"port": 443, "protocol": "TCP", "targetPort": 6443}]}}),
                "10.96.0.1",
                "<none>",
                "443/TCP",
            ),
            (
                json!({"spec": {"type": "ClusterIP", "clusterIP": "None", "externalIPs": ["1.2.3.4", "5.6.7.8"]}}),
                "None",
                "1.2.3.4,5.6.7.8",
                "<none>",
            ),
            (
                json!({"spec": {"type": "NodePort", "clusterIPs": ["10.0.0.9", "fd00::9"], "ports": [
                    {"port": 80, "protocol": "TCP", "nodePort": 30080},
                    {"port": 53, "protocol": "UDP"}]}}),
                "10.0.0.9",
                "<none>",
                "80:30080/TCP,53/UDP",
            ),
            (
                json!({"spec": {"type": "LoadBalancer", "clusterIPs": ["10.0.0.7"]}, "status": {}}),
                "10.0.0.7",
                "<pending>",
                "<none>",
            ),
            (
                json!({"spec": {"type": "LoadBalancer", "externalIPs": ["9.9.9.9"]},
                    "status": {"loadBalancer": {"ingress": [
                        {"ip": "203.0.113.9"}, {"hostname": "lb.example.com"}, {"ip": "203.0.113.9"},
                        {"ip": "198.51.100.1", "hostname": "ignored.example.com"}]}}}),
                "<none>",
                "198.51.100.1,203.0.113.9,lb.example.com,9.9.9.9",
                "<none>",
            ),
            (
                json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}),
                "<none>",
                "db.example.com",
                "<none>",
            ),
            (json!({"spec": {}}), "<none>", "<unknown>", "<none>"),
        ];
        for (service, cluster, external, ports) in cases {
            assert_eq!(cluster_ip(service), *cluster, "{service}");
            assert_eq!(external_ip(service), *external, "{service}");
            assert_eq!(service_ports(service), *ports, "{service}");
        }
    }

    #[test]
    fn ingresses() {
        let one = json!({"spec": {"rules": [{"host": "web.example.com"}]}, "status": {"loadBalancer": {}}});
        assert_eq!(ingress_hosts(&one), "web.example.com");
        assert_eq!(ingress_address(&one), "");
        assert_eq!(ingress_ports(&one), "80");

        let many = json!({
            "spec": {
                "rules": [{"host": "a"}, {}, {"host": "c"}, {"host": "d"}, {"host": "e"}],
                "tls": [{"hosts": ["a"]}],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "10.1.1.2"}, {"hostname": "lb"}]}},
        });
        assert_eq!(ingress_hosts(&many), "a,c,d + 2 more...");
        let three = json!({"spec": {"rules": [{"host": "a"}, {"host": "b"}, {"host": "c"}, {}]}});
        assert_eq!(ingress_hosts(&three), "a,b,c + 1 more...");
        let exactly = json!({"spec": {"rules": [{"host": "a"}, {}, {"host": "b"}, {"host": "c"}]}});
        assert_eq!(ingress_hosts(&exactly), "a,b,c");
        assert_eq!(ingress_address(&many), "10.1.1.2,lb");
        assert_eq!(ingress_ports(&many), "80, 443");
        assert_eq!(
            ingress_hosts(&json!({"spec": {"rules": [{"http": {}}]}})),
            "*"
        );
        assert_eq!(ingress_hosts(&json!({"spec": {"defaultBackend": {}}})), "*");

        let class = |p: Value| json!({"spec": {"controller": "x", "parameters": p}});
        assert_eq!(
            ingress_class_parameters(&class(
                json!({"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"})
            )),
            "Params.k8s.example.com/p"
        );
        assert_eq!(
            ingress_class_parameters(&class(json!({"kind": "ConfigMap", "name": "c"}))),
            "ConfigMap/c"
        );
        assert_eq!(ingress_class_parameters(&json!({"spec": {}})), "<none>");
    }

    #[test]
    fn endpoints_and_slices() {
        assert_eq!(endpoints(&json!({})), "<none>");
        assert_eq!(endpoints(&json!({"subsets": [{"addresses": []}]})), "");
        let two_ports = json!({"subsets": [{
            "addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::2"}],
            "ports": [{"port": 80}, {"port": 443}],
        }]});
        assert_eq!(
            endpoints(&two_ports),
            "10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 1 more..."
        );
        let headless = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]},
            {"addresses": [{"ip": "10.0.0.3"}], "ports": [{"port": 53}]},
        ]});
        assert_eq!(endpoints(&headless), "10.0.0.1,10.0.0.2,10.0.0.3:53");

        let slice = json!({"addressType": "IPv4",
            "ports": [{"port": 80}, {"name": "metrics"}, {}, {"port": 9}],
            "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2", "10.0.0.3"]}]});
        assert_eq!(slice_ports(&slice), "80,metrics,* + 1 more...");
        assert_eq!(slice_endpoints(&slice), "10.0.0.1,10.0.0.2,10.0.0.3");
        let empty = json!({"addressType": "IPv4", "ports": null, "endpoints": []});
        assert_eq!(slice_ports(&empty), "<unset>");
        assert_eq!(slice_endpoints(&empty), "<unset>");
    }
}
