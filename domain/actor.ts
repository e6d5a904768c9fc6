/** Who made a change: kept beside each revision, hold, store change and asset it made. */
export interface Actor {
  id: string;
  name: string | null;
}
