/** How often long work says it is still going. */
export const PROGRESS_INTERVAL_MS = 4000;

/**
 * Runs long work (a download, an image build) saying what it is at the start, that it is still going at
 * least every 5 s with the time so far, and how long it took or why it failed at the end.
 */
export async function withProgress<T>(what: string, say: (line: string) => void, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  say(`${what}…`);
  const ticker = setInterval(() => say(`  still ${what} (${seconds()} s)`), PROGRESS_INTERVAL_MS);
  try {
    const result = await work();
    say(`done ${what} in ${seconds()} s`);
    return result;
  } catch (error) {
    say(`failed ${what} after ${seconds()} s`);
    throw error;
  } finally {
    clearInterval(ticker);
  }
}
