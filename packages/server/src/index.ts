// @temp-inbox/server as a library. startTempInbox() is the one-call service for test
// suites; startServer() and loadConfig() build it from an explicit configuration.
// openStore(), mailMetadata() and signAddressToken() prepare data for a service (library.ts).
// The temp-inbox-server command (main.ts) runs it as a service.
export { startTempInbox, type StartTempInboxOptions, type TempInbox } from './start-temp-inbox.js';
export { startServer, type RunningServer, type StartOptions, type StopReport } from './server.js';
export { StartupError } from './startup-errors.js';
export { ConfigError, loadConfig, type Config } from './config/index.js';
export {
  mailMetadata,
  openStore,
  signAddressToken,
  type AddressRecord,
  type MailBody,
  type MailSummary,
  type NewMail,
  type StoreLocation,
  type TempInboxStore,
} from './library.js';
