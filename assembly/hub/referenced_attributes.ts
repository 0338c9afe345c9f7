import { ProtoReader } from "../proto/reader";
import { GLOBAL_WORDS } from "./global_words";
import { readMessage, readSint32, readString, readVarint, skipField } from "./wire_read";

/** ReferencedAttributes.Condition. */
export const enum Condition {
  UNSPECIFIED = 0,
  ABSENCE = 1,
  EXACT = 2,
  REGEX = 3,
}

/**
 * One attribute the hub looked at (ReferencedAttributes.AttributeMatch) with
 * its indexes resolved to strings.
 */
export class ReferencedMatch {
  name: string = "";
  /** A Condition; other numbers are passed through as the proto3 enum is open. */
  condition: i32 = Condition.UNSPECIFIED;
  /**
   * The referenced key of a string-map attribute, or null when the match has
   * no map_key field, meaning the attribute as a whole. Upstream decodes an
   * unset map_key as global word 0 (`source.ip`, hub-client.md §6.1); we do
   * not copy that quirk. Field presence is what we read, so a sender that
   * drops a zero sint32 (proto3 does) cannot reference word 0 as a map key;
   * `source.ip` is not a map key anyone uses.
   */
  mapKey: string | null = null;
  regex: string = "";
  // Raw indexes, kept until the message's words are known (field order is free).
  nameIndex: i32 = 0;
  mapKeyIndex: i32 = 0;
  hasMapKey: bool = false;
}

/**
 * The "shape" of a check answer: which attributes the hub referenced and how.
 * `valid` is false when an index has no word; the check cache must then not
 * store the answer (its shape is unknown), though the answer itself is used.
 */
export class ReferencedAttributes {
  matches: Array<ReferencedMatch> = [];
  valid: bool = true;
}

/**
 * Reads the mesh.hub.v1.ReferencedAttributes in `parent`'s current field into
 * `into`, resolving indexes with the global words (i >= 0) and the message's
 * own `words` (i < 0 is word -i-1). Sets `parent.failed` when malformed.
 */
export function readReferencedAttributes(parent: ProtoReader, into: ReferencedAttributes): void {
  const r = readMessage(parent);
  const words = new Array<string>();
  while (r.next()) {
    if (r.field == 1) words.push(readString(r));
    else if (r.field == 2) {
      const m = readMessage(r);
      into.matches.push(readMatch(m));
      if (m.failed) r.failed = true;
    } else skipField(r);
  }
  if (r.failed) {
    parent.failed = true;
    return;
  }
  const matches = into.matches;
  for (let i = 0, n = matches.length; i < n; i++) {
    const m = unchecked(matches[i]);
    const name = wordAt(m.nameIndex, words);
    if (name === null) into.valid = false;
    else m.name = name;
    if (m.hasMapKey) {
      const key = wordAt(m.mapKeyIndex, words);
      if (key === null) into.valid = false;
      m.mapKey = key !== null ? key : "";
    }
  }
}

function readMatch(r: ProtoReader): ReferencedMatch {
  const m = new ReferencedMatch();
  while (r.next()) {
    switch (r.field) {
      case 1:
        m.nameIndex = readSint32(r);
        break;
      case 2:
        m.condition = <i32>readVarint(r);
        break;
      case 3:
        m.regex = readString(r);
        break;
      case 4:
        m.mapKeyIndex = readSint32(r);
        m.hasMapKey = true;
        break;
      default:
        skipField(r);
    }
  }
  return m;
}

/** The word for a dictionary index, or null when out of range. */
function wordAt(index: i32, words: Array<string>): string | null {
  if (index >= 0) return index < GLOBAL_WORDS.length ? unchecked(GLOBAL_WORDS[index]) : null;
  // -1 - index cannot overflow, unlike -index - 1 at i32.MIN_VALUE.
  const local = -1 - index;
  return local < words.length ? unchecked(words[local]) : null;
}
