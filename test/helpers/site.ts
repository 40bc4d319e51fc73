// A web page on the loopback interface for an agent's webfetch: no internet needed, and every fetch
// counted, so a test tells a refused fetch from one that went out.

export interface Site {
  /** The page's address. */
  url: string
  /** Fetches so far; a test sets it to 0 before the fetch it counts. */
  hits: number
  stop(): Promise<void>
}

/** A plain-text page answering `body` to every request. */
export function countingSite(body: string): Site {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => {
      site.hits++
      return new Response(body, { headers: { "content-type": "text/plain" } })
    },
  })
  const site: Site = { url: `http://127.0.0.1:${server.port}/notes`, hits: 0, stop: () => server.stop(true) }
  return site
}
