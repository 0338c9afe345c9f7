// Stand-in for upstream's bookinfo images, with their behaviour on the wire:
//   node bookinfo.mjs productpage|details|ratings|reviews [v1|v2|v3] [port]
// (port 9080 as the images). productpage calls details and reviews by their
// short names; reviews v2 and v3 call ratings (black and red stars), v1 does
// not. Each forwards the request's tracing and end-user headers, as upstream's
// services do, and answers /health.
import { createServer, request } from "node:http";

const [service, version = "v1", portArg] = process.argv.slice(2);
const port = Number(portArg ?? process.env.PORT ?? 9080);
const FORWARDED = ["x-request-id", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags", "b3", "traceparent", "tracestate", "end-user", "user-agent", "cookie", "authorization"];
const REVIEWS = [
  { reviewer: "Reviewer1", text: "An extremely entertaining play by Shakespeare. The slapstick humour is refreshing!", stars: 5 },
  { reviewer: "Reviewer2", text: "Absolutely fun and entertaining. The play lacks thematic depth when compared to other plays by Shakespeare.", stars: 4 },
];

function forwarded(req) {
  return Object.fromEntries(FORWARDED.filter((h) => req.headers[h] !== undefined).map((h) => [h, req.headers[h]]));
}

/** GET http://<host>:9080<path> as JSON; rejects on a transport error or a status other than 200. */
function getJson(host, path, headers) {
  return new Promise((resolve, reject) => {
    // A connection per call, as upstream's services make them (no keep-alive pool).
    const req = request({ host, port: 9080, path, headers, timeout: 10_000, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c) => (body += c));
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${host}: status ${res.statusCode}`))));
    });
    req.on("timeout", () => req.destroy(new Error(`${host}: timeout`)));
    req.on("error", reject);
    req.end();
  });
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function details(id) {
  return { id, author: "William Shakespeare", year: 1595, type: "paperback", pages: 200, publisher: "PublisherA", language: "English", "ISBN-10": "1234567890", "ISBN-13": "123-1234567890" };
}

async function reviews(id, headers) {
  let ratings;
  let ratingsError = false;
  if (version !== "v1") {
    try {
      ratings = (await getJson("ratings", `/ratings/${id}`, headers)).ratings;
    } catch {
      ratingsError = true;
    }
  }
  return {
    id: String(id),
    podname: process.env.HOSTNAME ?? "",
    clustername: "null",
    reviews: REVIEWS.map(({ reviewer, text }, i) => ({
      reviewer,
      text,
      ...(version === "v1"
        ? {}
        : ratingsError
          ? { rating: { error: "Ratings service is currently unavailable" } }
          : { rating: { stars: ratings?.[reviewer] ?? REVIEWS[i].stars, color: version === "v3" ? "red" : "black" } }),
    })),
  };
}

async function productpage(req, res) {
  const headers = forwarded(req);
  const [d, r] = await Promise.allSettled([getJson("details", "/details/0", headers), getJson("reviews", "/reviews/0", headers)]);
  const lines = ["<html><head><title>Simple Bookstore App</title></head><body>", '<h3 class="text-center text-primary">The Comedy of Errors</h3>'];
  if (d.status === "fulfilled") lines.push("<h4>Book Details</h4>", `<dl><dt>Type:</dt>${d.value.type}<dt>Pages:</dt>${d.value.pages}<dt>Publisher:</dt>${d.value.publisher}</dl>`);
  else lines.push("<h4>Error fetching product details!</h4>", "<p>Sorry, product details are currently unavailable for this book.</p>");
  if (r.status === "fulfilled") {
    lines.push("<h4>Book Reviews</h4>");
    for (const review of r.value.reviews) {
      lines.push(`<blockquote><p>${review.text}</p><small>${review.reviewer}</small>`);
      if (review.rating?.stars) lines.push(`<font color="${review.rating.color}">${'<span class="glyphicon glyphicon-star"></span>'.repeat(review.rating.stars)}</font>`);
      if (review.rating?.error) lines.push(`<p><i>${review.rating.error}</i></p>`);
      lines.push("</blockquote>");
    }
  } else lines.push("<h4>Error fetching product reviews!</h4>", "<p>Sorry, product reviews are currently unavailable for this book.</p>");
  lines.push("</body></html>");
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(`${lines.join("\n")}\n`);
}

const server = createServer((req, res) => {
  req.resume();
  const path = new URL(req.url ?? "/", "http://app").pathname;
  const id = Number(/\/(\d+)$/.exec(path)?.[1] ?? 0);
  if (path === "/health") return json(res, 200, { status: `${service} is healthy` });
  const fail = (e) => json(res, 500, { error: String(e?.message ?? e) });
  if (service === "productpage" && (path === "/productpage" || path === "/")) return productpage(req, res).catch(fail);
  if (service === "details" && path.startsWith("/details/")) return details(id).then((b) => json(res, 200, b), fail);
  if (service === "ratings" && path.startsWith("/ratings/")) return json(res, 200, { id, ratings: { Reviewer1: 5, Reviewer2: 4 } });
  if (service === "reviews" && path.startsWith("/reviews/")) return reviews(id, forwarded(req)).then((b) => json(res, 200, b), fail);
  json(res, 404, { error: "Not Found" });
});
server.listen(port, "0.0.0.0", () => process.stdout.write(`${service} ${version} listening on ${port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
