// The client a per-client limit counts (limitKey): IPv4 as it is, IPv6 by its /64, whatever its spelling.
import { expect, test } from "bun:test";
import { limitKey } from "../src/lib/limit-key.ts";

test("IPv6 addresses of one /64 are one client, however written; IPv4 ones are themselves", () => {
  const same = [
    "2001:db8:1:2::1",
    "2001:0DB8:0001:0002:ffff:0:0:9",
    "2001:db8:1:2::1%eth0",
    "2001:db8:1:2:0:0:1.2.3.4",
  ];
  expect(new Set(same.map(limitKey))).toEqual(new Set(["2001:db8:1:2::/64"]));
  expect(limitKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
  expect(limitKey("::1")).toBe("0:0:0:0::/64");
  expect(limitKey("203.0.113.7")).toBe("203.0.113.7");
  // An IPv4 client on a dual-stack socket is its IPv4 address.
  expect(limitKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
  // Not an address (in process, "unknown"): kept as it is.
  for (const text of ["unknown", "1::2::3", "12345::1", "1:2:3:4:5:6:7:8:9"]) expect(limitKey(text)).toBe(text);
});
