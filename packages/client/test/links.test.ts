// Which link waitForLink picks (pure functions; the end-to-end choice is in sdk.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { anchorTexts, classifyLink, rankLinks } from '../src/links.js';

describe('link preference', () => {
  it('classifies verification, sign-in and reset links as preferred', () => {
    for (const link of [
      'https://app.example/verify?token=1',
      'https://app.example/confirm-email/abc',
      'https://app.example/activate/9',
      'https://app.example/auth/magic-link?k=1',
      'https://app.example/login?otp=1',
      'https://app.example/account/reset-password?t=2',
      'https://app.example/invitations/accept/5',
    ])
      assert.equal(classifyLink(link), 'preferred', link);
  });

  it('classifies unsubscribe, preference, legal, social and tracking links as unwanted', () => {
    for (const link of [
      'https://app.example/unsubscribe?u=1',
      'https://app.example/email-preferences',
      'https://list-manage.example/opt-out',
      'https://app.example/manage-your-subscriptions',
      'https://app.example/legal/privacy',
      'https://app.example/terms',
      'https://www.facebook.com/app',
      'https://twitter.com/app',
      'https://x.com/app',
      'https://www.linkedin.com/company/app',
      'https://youtu.be/abc',
      'https://track.mailer.example/c/1',
      'https://app.example/pixel/1',
      'https://app.example/images/logo.png',
      'not a url',
    ])
      assert.equal(classifyLink(link), 'unwanted', link);
    assert.equal(classifyLink('https://app.example/blog/post'), 'other');
  });

  it('reads anchor texts: a tracked link whose text says "Verify" is preferred; text can also make a link unwanted', () => {
    assert.equal(classifyLink('https://track.mailer.example/c/1', 'Verify your email'), 'preferred');
    assert.equal(classifyLink('https://app.example/go/2', 'Unsubscribe from these emails'), 'unwanted');
    assert.equal(classifyLink('https://app.example/go/3', 'Privacy policy'), 'unwanted');
    const texts = anchorTexts('<p><A class="b" HREF="https://a.example/x?a=1&amp;b=2"><span>Confirm</span>\n your  account</A><a href=\'https://b.example/\'>B</a><a name="no-href">n</a><a href=https://c.example/>C</a>');
    assert.deepEqual([...texts], [
      ['https://a.example/x?a=1&b=2', 'Confirm your account'],
      ['https://b.example/', 'B'],
      ['https://c.example/', 'C'],
    ]);
    assert.deepEqual([...anchorTexts(null)], []);
    // Unclosed tags and stray "<a" do not stop it.
    assert.deepEqual([...anchorTexts('<abbr>x</abbr><a href="https://d.example/">D')], [['https://d.example/', 'D']]);
  });

  it('ranks preferred first, then others in order; unwanted only when contains names them', () => {
    const links = ['https://www.facebook.com/app', 'https://app.example/help', 'https://app.example/unsubscribe', 'https://app.example/blog', 'https://app.example/verify?t=1'];
    assert.deepEqual(rankLinks(links, null), ['https://app.example/verify?t=1', 'https://app.example/help', 'https://app.example/blog']);
    assert.deepEqual(rankLinks(links, null, 'UNSUB'), ['https://app.example/unsubscribe']);
    assert.deepEqual(rankLinks(links, null, /app\.example\/(help|unsubscribe)/), ['https://app.example/help', 'https://app.example/unsubscribe']);
    assert.deepEqual(rankLinks(['https://app.example/unsubscribe'], null), []);
    assert.deepEqual(rankLinks([], '<a href="x">y</a>'), []);
    // A global RegExp is tested from the start every time.
    const g = /example/g;
    assert.deepEqual(rankLinks(['https://a.example/1', 'https://b.example/2'], null, g), ['https://a.example/1', 'https://b.example/2']);
  });

  it('reads a large HTML body in linear time', () => {
    // Timed against a quarter of the input in the same process, so a loaded machine
    // slows both alike: linear scanning takes about 4x as long, scanning the rest of the
    // body again for each anchor (no "</a" in it) about 14x. The two sizes take turns,
    // five runs each, and the fastest of each counts: a pause of the process (not
    // scheduled, a collection) lengthens some runs of either, not every run of one.
    const body = (anchors: number) => '<a href="https://app.example/x">'.repeat(anchors) + '<a'.repeat(4 * anchors);
    const small = body(4_000);
    const large = body(16_000);
    const best = { small: Infinity, large: Infinity };
    anchorTexts(small);
    for (let i = 0; i < 5; i++) {
      for (const size of ['small', 'large'] as const) {
        const started = performance.now();
        anchorTexts(size === 'small' ? small : large);
        best[size] = Math.min(best[size], performance.now() - started);
      }
    }
    const ratio = best.large / best.small;
    assert.ok(ratio < 8, `4x the input took ${ratio.toFixed(1)}x as long: quadratic scanning`);
  });
});
