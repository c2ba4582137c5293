/**
 * @module domain/network
 * Addresses and host names, classified without resolving anything: which hosts a
 * server-side request (a webhook delivery) must never target, and which key a client
 * address is rate-limited under. Pure functions over text; IPv6 is compared by value, so
 * every spelling of an address (compressed, IPv4-embedded, mapped) gets the same answer.
 */

type Range = { prefix: number[]; bits: number; name: string };

const v4 = (cidr: string, name: string): Range => {
  const [address = "", bits = "32"] = cidr.split("/");
  return { prefix: address.split(".").map(Number), bits: Number(bits), name };
};

/** IANA IPv4 special-purpose registry and friends: nothing public is reachable there. */
const SPECIAL_IPV4: Range[] = [
  v4("0.0.0.0/8", "this network"),
  v4("10.0.0.0/8", "private"),
  v4("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
  v4("127.0.0.0/8", "loopback"),
  v4("169.254.0.0/16", "link-local"),
  v4("172.16.0.0/12", "private"),
  v4("192.0.0.0/24", "IETF protocol assignments"),
  v4("192.0.2.0/24", "documentation"),
  v4("192.88.99.0/24", "6to4 relay anycast"),
  v4("192.168.0.0/16", "private"),
  v4("198.18.0.0/15", "benchmarking"),
  v4("198.51.100.0/24", "documentation"),
  v4("203.0.113.0/24", "documentation"),
  v4("224.0.0.0/4", "multicast"),
  v4("240.0.0.0/4", "reserved"),
];

const v6 = (cidr: string, name: string): Range => {
  const [address = "", bits = "128"] = cidr.split("/");
  const words = parseIPv6(address);
  if (!words) throw new Error(`bad range ${cidr}`);
  return { prefix: words, bits: Number(bits), name };
};

/** IPv6 special-purpose ranges; ::ffff:0:0/96 (IPv4-mapped) is judged by its IPv4 address instead. */
const SPECIAL_IPV6: Range[] = [
  v6("::/96", "unspecified, loopback or IPv4-compatible"),
  v6("64:ff9b::/96", "NAT64 (reaches IPv4 addresses)"),
  v6("64:ff9b:1::/48", "local NAT64"),
  v6("100::/64", "discard"),
  v6("2001::/23", "IETF protocol assignments (Teredo and others)"),
  v6("2001:db8::/32", "documentation"),
  v6("2002::/16", "6to4 (reaches IPv4 addresses)"),
  v6("3fff::/20", "documentation"),
  v6("5f00::/16", "segment routing"),
  v6("fc00::/7", "unique local (private)"),
  v6("fe80::/10", "link-local"),
  v6("fec0::/10", "site-local"),
  v6("ff00::/8", "multicast"),
];

/** Names that never denote a public host (RFC 6761, RFC 8375, common private suffixes). */
const SPECIAL_SUFFIXES = ["localhost", "local", "internal", "home.arpa", "lan", "intranet", "test", "invalid", "onion", "arpa"];

/** A dotted-quad IPv4 address as 4 octets, or null. */
export function parseIPv4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (/^(0|[1-9]\d{0,2})$/.test(p) ? Number(p) : Number.NaN));
  return octets.every((o) => o >= 0 && o <= 255) ? octets : null;
}

/** An IPv6 address (with or without brackets, `::` and an IPv4 tail) as 8 16-bit words, or null. */
export function parseIPv6(text: string): number[] | null {
  const address = text.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (!address.includes(":")) return null;
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const words = (half: string): number[] | null => {
    if (half === "") return [];
    const out: number[] = [];
    const parts = half.split(":");
    for (const [index, part] of parts.entries()) {
      if (index === parts.length - 1 && part.includes(".")) {
        const quad = parseIPv4(part);
        if (!quad) return null;
        out.push(((quad[0] ?? 0) << 8) | (quad[1] ?? 0), ((quad[2] ?? 0) << 8) | (quad[3] ?? 0));
      } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
        out.push(Number.parseInt(part, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = words(halves[0] ?? "");
  const tail = halves.length === 2 ? words(halves[1] ?? "") : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : null;
}

function inRange(value: number[], range: Range, bitsPerPart: number): boolean {
  let remaining = range.bits;
  for (let i = 0; remaining > 0; i++, remaining -= bitsPerPart) {
    const take = Math.min(bitsPerPart, remaining);
    const shift = bitsPerPart - take;
    if ((value[i] ?? 0) >> shift !== (range.prefix[i] ?? 0) >> shift) return false;
  }
  return true;
}

/**
 * Why a host must not be the target of a server-side request (private, loopback,
 * link-local, reserved, documentation, or an IPv6 form that tunnels to IPv4), or null
 * when it looks public. `hostname` as URL.hostname gives it; a trailing dot is ignored
 * (`localhost.` is localhost).
 */
export function specialPurposeReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  const quad = parseIPv4(host);
  if (quad) return SPECIAL_IPV4.find((range) => inRange(quad, range, 8))?.name ?? null;
  const words = parseIPv6(host);
  if (words) {
    const mapped = words.slice(0, 6).every((w, i) => (i === 5 ? w === 0xffff : w === 0));
    if (mapped) {
      const embedded = [(words[6] ?? 0) >> 8, (words[6] ?? 0) & 255, (words[7] ?? 0) >> 8, (words[7] ?? 0) & 255];
      return SPECIAL_IPV4.find((range) => inRange(embedded, range, 8))?.name ?? null;
    }
    return SPECIAL_IPV6.find((range) => inRange(words, range, 16))?.name ?? null;
  }
  if (host.includes(":") || host.startsWith("[")) return "not a valid address";
  if (host === "" || !host.includes(".")) return "a single-label name resolves inside the local network";
  const suffix = SPECIAL_SUFFIXES.find((s) => host === s || host.endsWith(`.${s}`));
  return suffix ? `.${suffix} names are not public` : null;
}

export function isSpecialPurposeHost(hostname: string): boolean {
  return specialPurposeReason(hostname) !== null;
}

/**
 * The key a client address is rate-limited under: an IPv4 address as is, an IPv6 address
 * by its /64 (one subscriber usually holds a whole /64, so per-address keys are free to
 * multiply), an IPv4-mapped IPv6 address as its IPv4 address. Null for anything else.
 */
export function clientKey(address: string): string | null {
  const quad = parseIPv4(address.trim());
  if (quad) return quad.join(".");
  const words = parseIPv6(address.trim());
  if (!words) return null;
  if (words.slice(0, 6).every((w, i) => (i === 5 ? w === 0xffff : w === 0))) {
    return [(words[6] ?? 0) >> 8, (words[6] ?? 0) & 255, (words[7] ?? 0) >> 8, (words[7] ?? 0) & 255].join(".");
  }
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(":")}::/64`;
}
