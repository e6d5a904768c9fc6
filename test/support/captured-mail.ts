/**
 * The mail capture (Mailpit) read back through its REST API, as the tests check what was sent: the messages
 * to one address, one header as it was sent, and how many it holds.
 */

export interface CapturedMail {
  id: string;
  subject: string;
  html: string;
  to: Array<{ address: string }>;
  /** Each header by its name as sent, several values joined with commas. */
  headers: Record<string, string>;
}

interface Summary {
  ID: string;
  Subject: string;
  To: Array<{ Address: string }> | null;
}

const PAGE = 500;

/** The summaries of the messages a search finds, oldest first (Mailpit answers newest first, a page at a time). */
async function searched(apiUrl: string, query: string): Promise<Summary[]> {
  const found: Summary[] = [];
  for (let start = 0; ; start += PAGE) {
    const answer = await fetch(`${apiUrl}/search?query=${encodeURIComponent(query)}&start=${start}&limit=${PAGE}`);
    if (!answer.ok) throw new Error(`the mail capture answered ${answer.status} to a search for ${query}`);
    const page = (await answer.json()) as { messages: Summary[] };
    found.push(...page.messages);
    if (page.messages.length < PAGE) return found.reverse();
  }
}

async function json<T>(url: string): Promise<T> {
  const answer = await fetch(url);
  if (!answer.ok) throw new Error(`the mail capture answered ${answer.status} to ${url}`);
  return (await answer.json()) as T;
}

/** Messages the mail capture holds for one address, oldest first. */
export async function mailTo(apiUrl: string, address: string): Promise<CapturedMail[]> {
  // The search matches part of an address: only those sent to this one are kept.
  const summaries = (await searched(apiUrl, `to:"${address}"`)).filter((mail) => (mail.To ?? []).some((to) => to.Address === address));
  return Promise.all(
    summaries.map(async (summary) => {
      const message = await json<{ HTML: string }>(`${apiUrl}/message/${summary.ID}`);
      const headers = await json<Record<string, string[]>>(`${apiUrl}/message/${summary.ID}/headers`);
      return {
        id: summary.ID,
        subject: summary.Subject,
        html: message.HTML,
        to: (summary.To ?? []).map((to) => ({ address: to.Address })),
        headers: Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, values.join(', ')])),
      };
    }),
  );
}

/** One header of a captured message as it was sent, read from its raw source; folded lines unfolded. Undefined when it has none. */
export async function sentHeader(apiUrl: string, mail: CapturedMail, name: string): Promise<string | undefined> {
  const source = await (await fetch(`${apiUrl}/message/${mail.id}/raw`)).text();
  const head = source.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((candidate) => candidate.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** How many messages the mail capture holds. */
export async function capturedCount(apiUrl: string): Promise<number> {
  return (await json<{ total: number }>(`${apiUrl}/messages?limit=1`)).total;
}

/** The recipients of every message the mail capture holds for a domain's addresses, once per message. */
export async function addressesAt(apiUrl: string, domain: string): Promise<string[]> {
  const summaries = await searched(apiUrl, `to:"@${domain}"`);
  return summaries.flatMap((mail) => (mail.To ?? []).map((to) => to.Address)).filter((address) => address.endsWith(`@${domain}`));
}
