"""Reads a Kafka topic from its beginning with kafka-python, a real Kafka
consumer independent of GRW, and prints each message as one JSON line:
partition, offset, key, value and headers (text). Stops once it has `count`
messages, or when none came for `idle` seconds.

    kafka_consume.py BOOTSTRAP TOPIC COUNT IDLE_SECONDS

`KAFKA_SASL=MECHANISM:user:password` authenticates with SASL
(`SCRAM-SHA-256`, `SCRAM-SHA-512` or `PLAIN`).
"""

import os

import json
import sys
import time

from kafka import KafkaConsumer, TopicPartition


def security():
    sasl = os.environ.get("KAFKA_SASL")
    if not sasl:
        return {}
    mechanism, user, password = sasl.split(":", 2)
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }


def text(raw):
    return None if raw is None else raw.decode("utf-8")


def main():
    bootstrap, topic, count, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **security(),
    )
    deadline = time.monotonic() + idle
    partitions = None
    while partitions is None:
        partitions = consumer.partitions_for_topic(topic)
        if partitions is None:
            if time.monotonic() > deadline:
                print(json.dumps({"error": f"topic {topic} not found"}), flush=True)
                return
            time.sleep(0.1)
    assigned = [TopicPartition(topic, p) for p in sorted(partitions)]
    consumer.assign(assigned)
    consumer.seek_to_beginning(*assigned)
    seen = 0
    deadline = time.monotonic() + idle
    while seen < count and time.monotonic() < deadline:
        batches = consumer.poll(timeout_ms=200)
        for records in batches.values():
            for record in records:
                print(
                    json.dumps(
                        {
                            "partition": record.partition,
                            "offset": record.offset,
                            "key": text(record.key),
                            "value": text(record.value),
                            "headers": [[k, text(v)] for k, v in record.headers],
                        }
                    ),
                    flush=True,
                )
                seen += 1
                deadline = time.monotonic() + idle
    consumer.close()


if __name__ == "__main__":
    main()
