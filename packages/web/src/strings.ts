// Every word the page shows or reads out, in one place: components import `s` and never
// write user-visible text themselves (web-strings.test.ts checks that), so translating
// the page is translating this file. Numbers, dates and relative times are not written
// here but formatted by Intl in the browser's locale (intl.ts).
import { count, day, decimal, percent, relative } from './intl.js';

export const s = {
  appName: 'temp-inbox',
  loading: 'Loading…',
  /** The tab's title, with the number of unread mails in the list when there are any. */
  title: (unread: number) => (unread > 0 ? `(${count(unread)}) temp-inbox` : 'temp-inbox'),
  tryAgainIn: (seconds: number) => ` (try again ${relative(seconds, 'second')})`,
  /** The footer's line when the operator names an abuse contact (ABUSE_CONTACT). */
  reportAbuse: 'Report abuse:',

  // Welcome (no address yet).
  welcomeTitle: 'A disposable inbox, ready in one click',
  welcomeText: 'Create an address above, give it to any site, and its mail appears here the moment it arrives. Nothing to sign up for; addresses and mail expire on their own.',

  // Header: the session's addresses, creating one.
  address: 'Address',
  activeAddress: 'Active address',
  copy: 'Copy',
  copyAddress: 'Copy the address',
  deleteAddress: 'Delete address',
  confirmDeleteAddress: (address: string) => `Delete ${address} and all its mail?`,
  forget: 'Forget',
  forgetHint: 'Forget these addresses in this browser (they keep receiving mail until they expire)',
  confirmForget: 'Forget every address of this browser? They keep receiving mail until they expire, but this page will no longer list them.',
  confirmDropOldest: (oldest: string) =>
    `This browser keeps three addresses: a new one drops ${oldest} from its list. It keeps receiving mail until it expires, but this page will no longer list it. Go on?`,
  nameOptional: 'Name (optional)',
  nameTaken: (address: string) => `${address} is taken. Choose another name, or leave the name empty for a random one.`,
  namePlaceholder: 'name (optional)',
  domain: 'Domain',
  newAddress: 'New address',

  // Desktop notifications (notify.ts): a toggle whose name stays the same, its state in aria-pressed.
  notify: 'Notify',
  notifyHint: { off: 'Show a desktop notification when mail arrives while this tab is in the background', on: 'Desktop notifications of new mail are on; click to turn them off', blocked: 'Notifications are blocked for this site in the browser’s settings' },
  notifyBlocked: 'Notifications are blocked for this site: allow them in the browser’s site settings, then press Notify again.',

  // The address's webhook (webhook-panel.tsx).
  webhook: 'Webhook',
  webhookIntro: 'Every mail this address receives is also POSTed as JSON to this URL, signed as Standard Webhooks says.',
  webhookNone: 'No webhook yet.',
  webhookUrl: 'Webhook URL',
  webhookUrlPlaceholder: 'https://example.com/hooks/mail',
  webhookSet: 'Set webhook',
  webhookReplace: 'Replace',
  webhookRemove: 'Remove webhook',
  confirmWebhookRemove: 'Remove the webhook? Deliveries not yet made are dropped.',
  webhookSince: (date: string) => `Set ${date}`,
  webhookSecret: 'Signing secret',
  webhookSecretOnce: 'Shown only now: keep it where your receiver verifies signatures. Replacing the URL makes a new one.',
  webhookDeliveries: 'Recent deliveries',
  webhookNoDeliveries: 'No deliveries yet.',
  webhookRefresh: 'Refresh',
  webhookOutcome: { delivered: 'Delivered', failed: 'Failed', gave_up: 'Gave up' } as Record<string, string>,
  webhookAttempt: (n: number) => `attempt ${count(n)}`,
  webhookStatus: (status: number | null) => (status === null ? 'no answer' : `HTTP ${status}`),
  webhookRetry: (date: string) => `next try ${date}`,

  // Open an inbox made elsewhere.
  openInbox: 'Open an inbox',
  openInboxToken: 'Token of an inbox made with the API, SDK or CLI',
  // Open a sandbox: the inbox of an SMTP login (docs/api.md "Sandboxes").
  openSandbox: 'Open a sandbox',
  sandboxName: 'Sandbox name (its SMTP login)',
  sandboxPassword: 'Password',
  /** A sandbox's mail in the list: every envelope recipient, Bcc ones too. */
  recipients: (to: string[]) => `to ${to.join(', ')}`,
  open: 'Open',
  /** Asked before a `#token=` link opens its inbox (anyone can send such a link). */
  confirmOpenLink: (address: string, dropped: string | undefined) =>
    `This link opens the inbox ${address} in this browser and makes it the active address.${dropped ? ` This browser keeps three addresses: it drops ${dropped} from its list (it keeps receiving mail until it expires).` : ''} Open it only if you asked for this link yourself. Open it?`,
  unknownInbox: 'an inbox whose address the link does not say',

  // The bot checks.
  powRunning: 'Checking this browser is not a bot…',
  powPassed: (seconds: number) => `Anti-bot check passed in ${count(seconds, 1)} s.`,
  powLabel: 'Anti-bot check',
  powUnsupported: 'The anti-bot check could not run in this browser.',
  powFailed: { insecure: 'The anti-bot check needs this page over HTTPS.', unsolved: 'The anti-bot check found no solution; try again.', error: 'The anti-bot check failed in this browser.' },
  challengeDidNotLoad: 'The challenge did not load.',
  challengeCouldNotLoad: 'The challenge could not be loaded.',

  // The list.
  mailList: 'Mail',
  mails: (n: number) => `${count(n)} ${n === 1 ? 'mail' : 'mails'}`,
  found: (n: number) => `${count(n)} found`,
  searchLabel: 'Search this inbox',
  searchPlaceholder: 'Search',
  /** The search field's tooltip: the syntax of docs/api.md "GET /api/mails/search". */
  searchHelp: 'Words, "a phrase", from:, to:, subject:, has:attachment, is:unread, is:read, after:2024-05-01, before:2024-05-01; put - before a term to leave it out.',
  clear: 'Clear',
  confirmClear: 'Delete every mail of this address?',
  noMatch: (query: string) => `Nothing in this inbox matches “${query}”.`,
  /** "Waiting for mail to <address>…", around the address (shown in bold). */
  waitingBefore: 'Waiting for mail to ',
  waitingAfter: '…',
  loadMore: 'Load more',
  newMail: (from: string, subject: string) => `New mail from ${from}: ${subject}`,
  noSubject: '(no subject)',
  /** Said before the sender of an unread mail in the list (the row is also bold, with a dot). */
  unread: 'Unread',
  /** Said (to screen readers; a paper clip shows it) before the subject of a mail with attachments. */
  withAttachments: (n: number) => (n === 1 ? 'With an attachment' : `With ${count(n)} attachments`),
  unknownSender: '(unknown sender)',

  // The live connection.
  live: 'live',
  liveHint: 'New mail appears here as it arrives',
  connecting: 'connecting…',
  interrupted: (seconds: number) => `Live updates interrupted — checking for mail every few seconds; retrying ${relative(seconds, 'second')}`,

  // Reading a mail.
  message: 'Message',
  selectMail: 'Select a mail to read it.',
  back: '← Inbox',
  from: 'From',
  delete: 'Delete',
  markUnread: 'Mark as unread',
  codes: 'Codes:',
  code: (c: string) => `code ${c}`,
  copyValue: (what: string) => `Copy ${what}`,
  copied: ' Copied',
  attachments: 'Attachments',
  attachment: 'attachment',
  fileType: 'FILE',
  views: 'Views of the message',
  viewHtml: 'HTML',
  viewText: 'Text',
  viewSource: 'Source',
  viewReport: 'Report',
  downloadEml: 'Download .eml',
  /** A mail the server could not parse in time (its `degraded` view): only its headers are known. */
  degraded: 'This mail could not be read in full in time; the Source tab shows it as received.',
  remoteBlocked: 'Remote content blocked.',
  loadRemote: 'Load',
  htmlFrame: 'Message (HTML)',
  allHeaders: 'All headers',
  header: { from: 'From', to: 'To', cc: 'Cc', replyTo: 'Reply-To', date: 'Date', received: 'Received', messageId: 'Message-ID', recipients: 'Recipients' },

  // The deliverability report of a mail (report-view.tsx, docs/api.md "Deliverability report").
  report: {
    label: 'Deliverability report',
    overall: 'Overall',
    failed: 'The report could not be made: ',
    verdict: { pass: 'pass', warn: 'warn', fail: 'fail', unavailable: 'unavailable' },
    /** What each verdict means, as the badge's tooltip. */
    verdictMeaning: {
      pass: 'Nothing to fix',
      warn: 'Worth a look',
      fail: 'A mailbox provider or mail client would refuse, hide or break this',
      unavailable: 'This section could not be computed',
    },
    section: { spam: 'Spam score', html: 'HTML support', links: 'Links', content: 'Content', sender: 'Sender' },
    spamScore: (score: number, threshold: number | null) => (threshold === null ? `score ${decimal(score)}` : `score ${decimal(score)} of ${decimal(threshold)}`),
    htmlSupport: (support: number, supported: number | null, clients: number) =>
      supported === null ? `${percent(support)} supported` : `${percent(support)} supported; ${count(supported)} of ${count(clients)} clients support every feature`,
    noHtml: 'no HTML',
    links: (n: number, broken: number, checked: boolean) => `${count(n)} ${n === 1 ? 'link' : 'links'}${checked ? `, ${count(broken)} broken` : ', not checked'}`,
    counts: (fail: number, warn: number) => `${count(fail)} fail, ${count(warn)} warn`,
    unavailableBecause: (reason: string) => `Unavailable: ${reason}`,
    findings: 'Findings',
    noFindings: 'Nothing was found to report.',
    evidence: 'Evidence:',
    rules: 'Rules the spam scanner matched',
    rule: 'Rule',
    ruleScore: 'Score',
    ruleDescription: 'Description',
    scanner: (name: string) => `Scanned by ${name}.`,
    features: 'Features some clients do not fully support',
    featureUnsupported: 'Not supported by:',
    featurePartial: 'Partly supported by:',
    featureNotes: 'Notes:',
    htmlData: (clients: number, date: string) => `Checked against ${count(clients)} mail clients (caniemail.com data of ${day(date)}).`,
    linksTable: 'Links and images of the mail',
    url: 'URL',
    kind: 'Kind',
    kindName: { link: 'link', image: 'image' },
    result: 'Result',
    status: 'HTTP status',
    linkResult: { ok: 'ok', redirect: 'redirect', broken: 'broken', refused: 'refused', skipped: 'skipped', error: 'no answer' },
    notChecked: 'not checked',
    noStatus: 'none',
    checkLinks: 'Check links',
    checkingLinks: 'Checking links…',
    checkLinksHint: 'Fetches each link once from the server (HEAD, or GET where HEAD is refused); links that could change something, such as unsubscribe or confirm, are skipped.',
    noLinks: 'The mail has no links or images.',
    linksTruncated: 'Only the first 200 are listed.',
  },

  // The authentication verdicts of a mail (auth-badges.tsx): "SPF pass", "DKIM fail (example.com)".
  auth: {
    label: 'Authentication',
    spf: 'SPF',
    dkim: 'DKIM',
    dmarc: 'DMARC',
    arc: 'ARC',
    result: { pass: 'pass', fail: 'fail', softfail: 'softfail', neutral: 'neutral', none: 'none', temperror: 'temporary error', permerror: 'permanent error' },
    signedBy: (domain: string) => `(${domain})`,
    /** What each result means, as the badge's tooltip. */
    meaning: {
      pass: 'Verified',
      fail: 'Checked and failed: not from where it claims, or changed on the way',
      softfail: 'The sender’s domain says this server is probably not allowed to send its mail',
      neutral: 'The sender’s domain makes no statement about this',
      none: 'Nothing to check: no record or no signature',
      temperror: 'Could not be checked: DNS did not answer in time, or failed',
      permerror: 'Could not be checked: a record or signature is broken',
    },
  },
} as const;
