/**
 * The facts of test/inbound/corpus-sisimai/ that Herald's parsers still miss, by file, each with
 * why (sisimai-corpus.test.ts insists each still misses, so a fix shows up and must be taken off).
 */
export interface KnownMiss {
  readonly fact: string
  readonly reason: string
}

export const KNOWN_MISSES: Record<string, ReadonlyArray<KnownMiss>> = {
  "lhost-activehunter-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org status 5.1.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-amazonses-01.eml": [
    { fact: "shironeko@example.co.jp status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-amazonses-02.eml": [
    { fact: "this-local-part-does-not-exist-on-the-server@docomo.ne.jp status 5.3.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-amazonworkmail-05.eml": [
    { fact: "sabatora@example.libsisimai.org status 4.4.2", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-amazonworkmail-07.eml": [
    { fact: "kijitora@libsisimai.org status 4.4.2", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-apachejames-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "00000000000@vtext.example.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "00000000000@vtext.example.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-courier-03.eml": [
    { fact: "kijitora@example.jp status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@google.example.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@google.example.com status 5.7.26", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@google.example.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@outlook.example.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@outlook.example.com status 5.7.509", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@outlook.example.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@yahoo-inc.example.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@yahoo-inc.example.com status 5.7.9", reason: "before issue 34s rules: not yet understood" },
    { fact: "pseudo-local-part@yahoo-inc.example.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-04.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "postmaster@cx.libsisimai.org bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-06.eml": [
    { fact: "blocked@libsisimai.net status 5.7.25", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-11.eml": [
    { fact: "hostunknown@libsisimai.net status 5.1.2", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-12.eml": [
    { fact: "mailboxfull@libsisimai.net status 5.2.2", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-20.eml": [
    { fact: "spamdetected@libsisimai.net status 5.7.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-24.eml": [
    { fact: "userunknown@libsisimai.net status 5.1.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-26.eml": [
    { fact: "userunknown@example.org status 5.1.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-29.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "expired@libsisimai.net bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-dragonfly-30.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko@nyaan.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-einsundeins-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@xxxx.fr bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@xxxx.fr status 5.2.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@xxxx.fr class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exchange2007-05.eml": [
    { fact: "gwang1@student.mlcsyd.nsw.edu.au status 4.4.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-03.eml": [
    { fact: "kijitora@example.or.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.or.jp status 5.7.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.or.jp class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-04.eml": [
    { fact: "kijitora@example.ed.jp status 5.7.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-05.eml": [
    { fact: "kijitora@neko.example.co.jp status 5.1.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-43.eml": [
    { fact: "kijitora@example.net status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-44.eml": [
    { fact: "kijitora@example.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.com status 5.0.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-48.eml": [
    { fact: "kijitora@example.net status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-52.eml": [
    { fact: "neko@example.net bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-exim-60.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "nyaan%gol.com@q002.kijitora.gol.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "nyaan%gol.com@q002.kijitora.gol.com status 5.0.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "nyaan%gol.com@q002.kijitora.gol.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-ezweb-08.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora-neko-nyaan-22222-cats@hotmail.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora-neko-nyaan-22222-cats@hotmail.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-fml-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko-nyaan@example.org bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-fml-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko@example.co.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-imailserver-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.co.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-imailserver-06.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.jp class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-kddi-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@x0000000000000.dion.ne.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-kddi-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@00000000000000.dion.ne.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-kddi-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@00000000000000.dion.ne.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-messagingserver-02.eml": [
    { fact: "kijitora@example.net bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.net status 5.2.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.net class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-messagingserver-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 2 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabineko@example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabineko@example.org status 5.7.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabineko@example.org class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "mikeneko@example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "mikeneko@example.org status 5.7.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "mikeneko@example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-mimecast-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabineko@neko.ef.example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabineko@neko.ef.example.org status 5.4.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabineko@neko.ef.example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-mimecast-02.eml": [
    { fact: "sabatora@example.net bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabatora@example.net status 5.7.54", reason: "before issue 34s rules: not yet understood" },
    { fact: "sabatora@example.net class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-office365-04.eml": [
    { fact: "otsu-sakaba-hunter-nyaaaaaaan@ezweb.ne.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "otsu-sakaba-hunter-nyaaaaaaan@ezweb.ne.jp status 5.1.351", reason: "before issue 34s rules: not yet understood" },
    { fact: "otsu-sakaba-hunter-nyaaaaaaan@ezweb.ne.jp class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-opensmtpd-11.eml": [
    { fact: "authfailure@libsisimai.net status 5.7.26", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-opensmtpd-13.eml": [
    { fact: "pseudo-local-part-of-yahoo-inc@yahoo.com status 4.7.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-opensmtpd-14.eml": [
    { fact: "blocked@libsisimai.net status 5.7.25", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-opensmtpd-17.eml": [
    { fact: "userunknown@libsisimai.net status 5.1.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "mailboxfull@libsisimai.net status 5.2.2", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-postfix-39.eml": [
    { fact: "kijitora@example.com status 5.6.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-postfix-44.eml": [
    { fact: "kijitora@example.jp status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-postfix-49.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora-neko-nyaan@ntt.example.ne.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora-neko-nyaan@ntt.example.ne.jp status 4.0.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora-neko-nyaan@ntt.example.ne.jp class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-postfix-50.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "soto-neko-nyaan@ntt.example.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "soto-neko-nyaan@ntt.example.com status 4.0.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "soto-neko-nyaan@ntt.example.com class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-postfix-64.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@wanadoo.fr bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-postfix-75.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@libsisimai.net bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@libsisimai.net status 4.3.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@libsisimai.net class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-qmail-08.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "shironeko@example.ad.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "shironeko@example.ad.jp class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendgrid-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-07.eml": [
    { fact: "kijitora@example.org status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-10.eml": [
    { fact: "kijitora@example.or.jp status 4.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-15.eml": [
    { fact: "kijitora@example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org status 5.1.2", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-18.eml": [
    { fact: "kijitora@example.jp status 5.3.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-33.eml": [
    { fact: "mailboxfull@neko.example.org status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-36.eml": [
    { fact: "kijitora@nyaan.example.com status 5.7.1", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-39.eml": [
    { fact: "kijitora@nekochan.example.ne.jp status 4.4.5", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-sendmail-56.eml": [
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko-nyaan@icloud.example.com status 4.7.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko-nyaan@icloud.example.com class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-trendmicro-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@neko.example.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-trendmicro-03.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-v5sendmail-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@exampl bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@exampl class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-v5sendmail-05.eml": [
    { fact: "names 4 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.edu bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.edu class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-v5sendmail-06.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.edu bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.edu class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-v5sendmail-07.eml": [
    { fact: "names 3 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-verizon-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "0000000000@vzwpix.com bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-verizon-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "may-be-straycat-nyaaaaaan@vtext.com bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "may-be-straycat-nyaaaaaan@vtext.com class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x1-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.org bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x3-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.co.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x3-05.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.or.jp bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x3-06.eml": [
    { fact: "xxxx@xxxx.net status 5.2.2", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x5-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@neko.example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@neko.example.org status 5.1.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@neko.example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x6-01.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@nyaan.example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@nyaan.example.org status 5.4.6", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@nyaan.example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-x6-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@libsisimai.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@libsisimai.org status 5.1.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@libsisimai.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "lhost-zoho-04.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@6kaku.example.co.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@6kaku.example.co.jp class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "not-rb-issue-368-bug.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@yyyyyy.net bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "rfc3464-04.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@mailx-53.neko.example.edu bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@mailx-53.neko.example.edu status 5.5.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@mailx-53.neko.example.edu class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "rfc3464-06.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.net bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.net status 5.5.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@example.net class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "rfc3464-39.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "kijitora@nyaan.example.net bounced", reason: "before issue 34s rules: not yet understood" }
  ],
  "rfc3464-51.eml": [
    { fact: "kijitora@example.de status 5.1.0", reason: "before issue 34s rules: not yet understood" }
  ],
  "rhost-aol-03.eml": [
    { fact: "names 2 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "mikeneko@example.jp bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "mikeneko@example.jp status 5.1.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "mikeneko@example.jp class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "rhost-franceptt-04.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@xxxx.fr bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@xxxx.fr status 5.2.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@xxxx.fr class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "rhost-franceptt-07.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class soft", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@wanadoo.fr bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@wanadoo.fr status 4.0.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@wanadoo.fr class soft", reason: "before issue 34s rules: not yet understood" }
  ],
  "rhost-franceptt-10.eml": [
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@laposte.net status 5.5.0", reason: "before issue 34s rules: not yet understood" },
    { fact: "xxxx@laposte.net class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "rhost-google-02.eml": [
    { fact: "is a bounce", reason: "before issue 34s rules: not yet understood" },
    { fact: "names 1 recipient(s)", reason: "before issue 34s rules: not yet understood" },
    { fact: "class hard", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko-nyaan@example.org bounced", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko-nyaan@example.org status 5.1.1", reason: "before issue 34s rules: not yet understood" },
    { fact: "neko-nyaan@example.org class hard", reason: "before issue 34s rules: not yet understood" }
  ],
  "rhost-gsuite-01.eml": [
    { fact: "kijitora@example.de status 5.1.0", reason: "before issue 34s rules: not yet understood" }
  ]
}
