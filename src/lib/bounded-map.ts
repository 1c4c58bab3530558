// The one way svc keeps a Map to a fixed number of entries: the oldest inserted goes first (a Map
// iterates in insertion order, and a key set again counts as new).

export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, capacity: number): void {
  map.delete(key);
  // Not empty here (size >= capacity >= 1), so the first key exists.
  if (map.size >= capacity) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
