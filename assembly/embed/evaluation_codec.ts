import { Evaluation } from "../evaluate";
import { writeAttributes } from "../proto/attributes_codec";
import { ProtoWriter } from "../proto/writer";

/**
 * Encodes an Evaluation as mesh.filter.v1.Evaluation
 * (proto/mesh/filter/v1/evaluation.proto) for embedders such as
 * `meshctl x hub-eval`.
 */
export function encodeEvaluation(e: Evaluation): Uint8Array {
  const w = new ProtoWriter(1024);
  const attributes = new ProtoWriter(1024);
  writeAttributes(attributes, e.attributes);
  w.messageField(1, attributes);

  const api = new ProtoWriter(64);
  if (e.api.matched) api.boolField(1, true);
  if (e.apiPattern.length > 0) api.stringField(2, e.apiPattern);
  for (let i = 0; i < e.api.bindingNames.length; i++) {
    const entry = new ProtoWriter(32);
    entry.stringField(1, e.api.bindingNames[i]);
    entry.stringField(2, e.api.bindingValues[i]);
    api.messageField(3, entry);
  }
  w.messageField(2, api);

  if (e.apiKey !== null) w.stringField(3, e.apiKey as string);
  for (let i = 0; i < e.quotas.length; i++) {
    const q = new ProtoWriter(32);
    q.stringField(1, e.quotas[i].quota);
    q.int64Field(2, e.quotas[i].charge);
    w.messageField(4, q);
  }
  if (e.forwardHeader.length > 0) w.stringField(5, e.forwardHeader);
  return w.finish();
}
