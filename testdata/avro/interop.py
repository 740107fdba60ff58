"""Avro interop helper driven by converters/avro tests: Confluent's Python serializer and deserializer
(confluent_kafka.schema_registry.avro) against the test Schema Registry.

usage: interop.py REGISTRY_URL < request.json > response.json

request:  {"produce": [{"topic", "schema", "value" (a Python expression), "key": bool}],
           "consume": [{"topic", "hex", "key": bool}]}
response: {"produced": ["hex", ...], "consumed": [tagged JSON value, ...]}

Tagged JSON for values JSON cannot hold: {"$bytes": hex}, {"$decimal": str}, {"$date": iso},
{"$time": iso}, {"$datetime": iso}, {"$uuid": str}.
"""
import base64  # noqa: F401  (available to value expressions)
import datetime
import decimal
import json
import sys
import uuid

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

UTC = datetime.timezone.utc


def tag(v):
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, decimal.Decimal):
        return {"$decimal": str(v)}
    if isinstance(v, datetime.datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"$date": v.isoformat()}
    if isinstance(v, datetime.time):
        return {"$time": v.isoformat()}
    if isinstance(v, uuid.UUID):
        return {"$uuid": str(v)}
    if isinstance(v, dict):
        return {k: tag(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [tag(x) for x in v]
    if isinstance(v, float) and v != v:
        return {"$float": "NaN"}
    return v


def main():
    client = SchemaRegistryClient({"url": sys.argv[1]})
    req = json.load(sys.stdin)
    out = {"produced": [], "consumed": []}
    env = {"decimal": decimal, "datetime": datetime, "uuid": uuid, "UTC": UTC, "D": decimal.Decimal}
    for p in req.get("produce") or []:
        ser = AvroSerializer(client, p["schema"], conf={"auto.register.schemas": True})
        field = MessageField.KEY if p.get("key") else MessageField.VALUE
        value = eval(p["value"], env)  # test-owned expressions
        data = ser(value, SerializationContext(p["topic"], field))
        out["produced"].append(data.hex())
    deser = AvroDeserializer(client)
    for c in req.get("consume") or []:
        field = MessageField.KEY if c.get("key") else MessageField.VALUE
        v = deser(bytes.fromhex(c["hex"]), SerializationContext(c["topic"], field))
        out["consumed"].append(tag(v))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
