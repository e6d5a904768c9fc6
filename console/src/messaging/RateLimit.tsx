import { fill, useWords } from '../i18n';
import type { ChannelConfig } from './channel-configs';

const WORDS = {
  en: {
    none: 'no limit',
    limit: '{rate}/s, burst {burst}',
    // No burst given: the API lets through no more than one second's worth at once.
    oneSecond: "{rate}/s, burst of one second's worth",
  },
  ar: {
    none: 'بلا حد',
    limit: '{rate} في الثانية، دفعة {burst}',
    oneSecond: '{rate} في الثانية، دفعة بقدر ثانية واحدة',
  },
};

/** A configuration's rate limit as a person reads it: "50/s, burst 10", or "no limit". */
export function RateLimit({ config }: { config: ChannelConfig }) {
  const words = useWords(WORDS);
  if (config.ratePerSecond === null) return words.none;
  return config.burst === null ? fill(words.oneSecond, { rate: config.ratePerSecond }) : fill(words.limit, { rate: config.ratePerSecond, burst: config.burst });
}
