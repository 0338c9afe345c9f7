// The Redis side of the shared quota store: one script per algorithm, each
// an atomic allocation (Redis runs a script alone), so replicas never
// over-grant. They do what quota_windows.ts does in memory, step by step, and
// add upstream redisquota's deduplication record. Every key they write
// expires on its own.
//
// KEYS: [1] the counter's hash, [2] the rolling window's closed buckets (a
//       sorted set by bucket start; unused by the fixed window), [3] the
//       deduplication record, or "" for none.
// ARGV: [1] maxAmount, [2] window ms, [3] bucket ms, [4] amount,
//       [5] best effort (1/0), [6] now ms (the replica's clock), [7] how long
//       a deduplication record is kept, ms.
// Reply: {granted, valid duration ms}.

/**
 * Returns the answer recorded for the same deduplication id, while the
 * record is younger than ARGV[7] on the replicas' clock (its PEXPIRE only
 * cleans up), or sets up what the scripts share.
 */
const DEDUP_READ = `
local now = tonumber(ARGV[6])
if KEYS[3] ~= "" then
  local seen = redis.call("HMGET", KEYS[3], "granted", "until", "expires")
  if seen[1] and now < tonumber(seen[3]) then
    local left = tonumber(seen[2]) - now
    if left < 0 then left = 0 end
    return {tonumber(seen[1]), left}
  end
end
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local bucket = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])
local best = ARGV[5] == "1"
local function share(left)
  if amount <= left then
    if amount < 0 then return 0 end
    return amount
  end
  if best and left > 0 then return left end
  return 0
end
local function answer(granted, valid)
  if KEYS[3] ~= "" then
    redis.call("HSET", KEYS[3], "granted", granted, "until", string.format("%d", now + valid), "expires", string.format("%d", now + tonumber(ARGV[7])))
    redis.call("PEXPIRE", KEYS[3], ARGV[7])
  end
  return {granted, valid}
end
`;

/** FIXED_WINDOW: `used` and the absolute `expire` of the window, which starts at the first allocation after the last one ended. */
export const FIXED_WINDOW_SCRIPT = `${DEDUP_READ}
local state = redis.call("HMGET", KEYS[1], "used", "expire")
local used = tonumber(state[1])
local expire = tonumber(state[2])
if not used or not expire or now >= expire then
  used = 0
  expire = now + window
  redis.call("HSET", KEYS[1], "used", 0, "expire", string.format("%d", expire))
  redis.call("PEXPIRE", KEYS[1], window)
end
local granted = share(max - used)
if granted == 0 then return answer(0, 0) end
redis.call("HINCRBY", KEYS[1], "used", granted)
return answer(granted, expire - now)
`;

/**
 * ROLLING_WINDOW: \`used\` (tokens in the window), the open bucket (\`bucket.used\`,
 * \`bucket.start\`) and \`seq\`; closed buckets are sorted-set members
 * \`<seq>.<tokens>\` scored by their start, reclaimed a window after it.
 */
export const ROLLING_WINDOW_SCRIPT = `${DEDUP_READ}
local state = redis.call("HMGET", KEYS[1], "used", "bucket.used", "bucket.start", "seq")
local used = tonumber(state[1]) or 0
local bucketUsed = tonumber(state[2]) or 0
local bucketStart = tonumber(state[3]) or now
local seq = tonumber(state[4]) or 0
if now - bucketStart >= bucket then
  if bucketUsed > 0 then
    seq = seq + 1
    redis.call("ZADD", KEYS[2], string.format("%d", bucketStart), seq .. "." .. bucketUsed)
  end
  bucketUsed = 0
  bucketStart = now
end
local horizon = string.format("%d", now - window)
local gone = redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", horizon)
if #gone > 0 then
  for _, member in ipairs(gone) do
    used = used - tonumber(string.match(member, "%.(%d+)$"))
  end
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", horizon)
end
if used < 0 then used = 0 end
local granted = share(max - used)
used = used + granted
bucketUsed = bucketUsed + granted
redis.call("HSET", KEYS[1], "used", used, "bucket.used", bucketUsed, "bucket.start", string.format("%d", bucketStart), "seq", seq)
redis.call("PEXPIRE", KEYS[1], window)
if redis.call("EXISTS", KEYS[2]) == 1 then redis.call("PEXPIRE", KEYS[2], window) end
if granted == 0 then return answer(0, 0) end
return answer(granted, window)
`;
