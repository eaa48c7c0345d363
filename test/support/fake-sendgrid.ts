/** The fake lives in infra/ (the dev mail sink reuses it); tests import it from here. */
export { FakeSendGrid } from '../../infra/fake-sendgrid.ts';
