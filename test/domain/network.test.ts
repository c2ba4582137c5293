import { describe, expect, it } from "vitest";
import { clientKey, isSpecialPurposeHost, parseIPv6, specialPurposeReason } from "../../src/domain/network";

/** Hosts as URL.hostname gives them (IPv6 in brackets, IPv4 forms already normalised by URL). */
describe("special-purpose hosts (never a webhook target)", () => {
  it.each([
    // names
    ["localhost", true],
    ["localhost.", true],
    ["api.localhost.", true],
    ["api.localhost", true],
    ["printer.local", true],
    ["metadata.internal", true],
    ["metadata.google.internal", true],
    ["router.home.arpa", true],
    ["intranet", true],
    ["x.test", true],
    ["hooks.example.com", false],
    ["hooks.example.com.", false],
    // IPv4
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["0.0.0.0", true],
    ["10.1.2.3", true],
    ["100.64.0.1", true],
    ["100.127.255.255", true],
    ["100.128.0.1", false],
    ["169.254.169.254", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.0.0.8", true],
    ["192.0.2.1", true],
    ["192.88.99.1", true],
    ["192.168.1.1", true],
    ["198.18.0.1", true],
    ["198.19.255.255", true],
    ["198.20.0.1", false],
    ["198.51.100.7", true],
    ["203.0.113.9", true],
    ["224.0.0.1", true],
    ["239.255.255.250", true],
    ["240.0.0.1", true],
    ["255.255.255.255", true],
    ["8.8.8.8", false],
    ["1.1.1.1", false],
    // IPv6
    ["[::1]", true],
    ["[::]", true],
    ["[::127.0.0.1]", true],
    ["[::7f00:1]", true],
    ["[::ffff:127.0.0.1]", true],
    ["[::ffff:7f00:1]", true],
    ["[::ffff:8.8.8.8]", false],
    ["[64:ff9b::7f00:1]", true],
    ["[64:ff9b::808:808]", true],
    ["[64:ff9b:1::1]", true],
    ["[2002:7f00:1::]", true],
    ["[2001::1]", true],
    ["[2001:db8::1]", true],
    ["[fc00::1]", true],
    ["[fd12:3456::1]", true],
    ["[fe80::1]", true],
    ["[fd00::1]", true],
    ["[febf::1]", true],
    ["[fec0::1]", true],
    ["[ff02::1]", true],
    ["[100::1]", true],
    ["[2606:4700:4700::1111]", false],
    ["[2001:4860:4860::8888]", false],
  ])("%s → %s", (host, special) => {
    expect(isSpecialPurposeHost(host)).toBe(special);
  });

  it.each([
    "http://localhost./x",
    "http://0x7f000001/x",
    "http://2130706433/x",
    "http://0177.0.0.1/x",
    "http://127.1/x",
    "http://[::ffff:127.0.0.1]/x",
    "http://[0:0:0:0:0:ffff:7f00:1]/x",
    "http://[::127.0.0.1]/x",
    "http://[64:ff9b::127.0.0.1]/x",
    "http://[2002:c0a8:0101::1]/x",
    "http://198.18.0.1./x",
  ])("every spelling URL accepts is caught: %s", (url) => {
    expect(specialPurposeReason(new URL(url).hostname)).not.toBeNull();
  });

  it("names the reason", () => {
    expect(specialPurposeReason("198.18.3.4")).toBe("benchmarking");
    expect(specialPurposeReason("[2002::1]")).toBe("6to4 (reaches IPv4 addresses)");
  });
});

describe("IPv6 parsing", () => {
  it.each([
    ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["[2001:db8::8:1]", [0x2001, 0xdb8, 0, 0, 0, 0, 8, 1]],
    ["::ffff:1.2.3.4", [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]],
    ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
    ["1::2::3", null],
    ["1:2:3:4:5:6:7:8:9", null],
    ["12345::", null],
    ["::1.2.3.256", null],
    ["example.com", null],
  ])("%s → %j", (text, words) => {
    expect(parseIPv6(text)).toEqual(words);
  });
});

describe("rate-limit keys", () => {
  it.each([
    ["203.0.113.9", "203.0.113.9"],
    ["2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"],
    ["2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002::9", "2001:db8:1:2::/64"],
    ["::ffff:198.51.100.4", "198.51.100.4"],
    ["not an address", null],
  ])("%s → %s", (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});
