import { MessageWords, type GlobalDictionary } from "../wire/compressed.ts";

/** ReferencedAttributes.Condition numbers (proto/mesh/hub/v1/hub.proto). */
export const CONDITION_ABSENCE = 1;
export const CONDITION_EXACT = 2;

export interface ReferencedAttributesObject {
  words?: string[];
  attributeMatches?: Array<{ name: number; condition: number; mapKey?: number }>;
}

interface Reference {
  name: string;
  key?: string;
  condition: typeof CONDITION_ABSENCE | typeof CONDITION_EXACT;
}

/**
 * Records which attributes an evaluation looked at and how, so that the
 * client can key its check cache on exactly those (hub-client.md §6.1):
 * EXACT when the answer depends on the value, ABSENCE when it depends on the
 * attribute (or the map entry `name[key]`) being absent.
 */
export class ReferencedAttributes {
  private readonly refs = new Map<string, Reference>();

  exact(name: string, key?: string): void {
    this.add({ name, key, condition: CONDITION_EXACT });
  }

  absent(name: string, key?: string): void {
    this.add({ name, key, condition: CONDITION_ABSENCE });
  }

  private add(ref: Reference): void {
    const id = ref.key === undefined ? ref.name : `${ref.name}\u0000${ref.key}`;
    if (!this.refs.has(id)) this.refs.set(id, ref);
  }

  /** `name` or `name[key]` with the condition, for tests and logs. */
  list(): string[] {
    return [...this.refs.values()].map(
      (r) => `${r.key === undefined ? r.name : `${r.name}[${r.key}]`}:${r.condition === CONDITION_EXACT ? "EXACT" : "ABSENCE"}`,
    );
  }

  /**
   * Encodes with the client's dictionary: global indexes below
   * `globalWordCount`, other strings as message words of this result.
   */
  toObject(dictionary: GlobalDictionary, globalWordCount: number): ReferencedAttributesObject {
    if (this.refs.size === 0) return {};
    const words = new MessageWords(dictionary, Math.min(globalWordCount, dictionary.size));
    const attributeMatches = [...this.refs.values()].map((r) => {
      const m: { name: number; condition: number; mapKey?: number } = { name: words.indexOf(r.name), condition: r.condition };
      if (r.key !== undefined) m.mapKey = words.indexOf(r.key);
      return m;
    });
    return words.words.length > 0 ? { words: words.words, attributeMatches } : { attributeMatches };
  }
}
