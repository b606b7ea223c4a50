// The words around a verification code (codes.ts; docs/decisions.md "Codes and links"): the
// words that name a code in the languages mail is written in, the labels of promotions and of
// everything else a number in a mail is, and the one expression that finds them all.
const L = '(?<![\\p{L}\\p{N}])';
const R = '(?![\\p{L}\\p{N}])';
/** Phrases matched only so that their words are not taken for labels. */
const NEUTRAL_WORDS = ['in order to'];
/** Words that name a code. */
const CODE_WORDS = [
  'c[óo]digos?', 'codice', 'kod', 'kode', 'koodi', 'код', 'otp', 'pin', 'passcode', 'password', 'passwort', 'kennwort',
  'mot de passe', 'contraseña', 'senha', 'palavra-passe', 'token', 'tan', '(?:mobile|push|sms|chip|photo|m|i)tan',
  'one[- ]?time', 'einmal\\p{L}*', 'usage unique', 'uso único', 'un solo uso', '2fa', 'mfa', 'two-factor', 'two-step', '2-step',
  'zwei-faktor\\p{L}*',
  // Weaker (WEAK_RE): they name what a code is for, and also appear in mail that has none ("a sign-in from Berlin, 10115").
  'verif\\p{L}*', 'vérif\\p{L}*', 'conf[ie]rm(?:ation|ación|ação|a|ar|er|ez|e|i)?', 'authenti\\p{L}*', 'authentifi\\p{L}*',
  'autentica\\p{L}*', 'sign(?:ing)?[- ]?in', 'log(?:ging)?[- ]?in', 'signin', 'login', 'anmeld\\p{L}*', 'inlog\\p{L}*', 'connexion',
  'iniciar sesión', 'inicio de sesión', 'accesso', 'enter', 'eingeben', 'introduce', 'saisi\\p{L}*', 'digite', 'insira', 'inserisci',
];
const CODE_SIGNS = ['验证码', '取件码', '提货码', '校验码', '动态码', '确认码', '认证码', '驗證碼', '验证', '密码', '口令', '認証', 'コード', 'パスワード', '인증'];
/** Code words that say what a code is for rather than that there is one; "verificatiecode" is a code word all the same. */
export const WEAK_RE = /^(?:verif|vérif|conf|auth|autent|sign|log|anmeld|inlog|connex|inici|accesso|enter|eingeben|introduce|saisi|digite|insira|inserisci|验证$|認証|인증)(?!.*code[sn]?$)/iu;
/** Labels of promotions: a token in the same sentence is never a code. */
const PROMO_WORDS = [
  'promo\\p{L}*', 'discount\\p{L}*', 'coupons?', 'vouchers?', 'gift', 'referral', 'sale', 'checkout', 'off', 'rabatt\\p{L}*',
  'gutschein\\p{L}*', 'aktionscode', 'réduction', 'remise', 'soldes', 'descuentos?', 'cupón', 'cupones', 'oferta', 'rebajas?',
  'desconto', 'cupom', 'promoção', 'sconto', 'korting',
];
const PROMO_SIGNS = ['优惠', '折扣', '促销', '割引', 'クーポン'];
/** Labels of everything else a number in a mail is. */
const OTHER_WORDS = [
  'numbers?', 'no\\.', 'nr\\.?', 'n[°º]', 'nº', 'número', 'numéro', 'numero', 'order(?:s|ed)?', 'invoice', 'receipt', 'tracking', 'track',
  'ship(?:ping|ment|ped)?', 'parcel', 'sku', 'items?', 'account', 'acct', 'customer', 'member(?:ship)?', 'ref(?:erence)?\\.?',
  'booking', 'reservation', 'tickets?', 'flight', 'seat', 'room', 'gate', 'suite', 'apt\\.?', 'unit', 'floor', 'box', 'phone',
  'tel\\.?', 'telephone', 'fax', 'mobile', 'call', 'hotline', 'whatsapp', 'sms', 'reply', 'zip', 'postal', 'postcode',
  'address', 'total', 'subtotal', 'price', 'amount', 'balance', 'qty', 'quantity', 'tax', 'vat', 'abn', 'acn', 'afsl', 'bsb',
  'iban', 'bic', 'swift', 'routing', 'sort', 'approval', 'authori[sz]ation', 'card', 'ending', 'ends', 'id', 'case',
  'company', 'reg\\.?', 'model', 'serial', 'version', 'support', 'area', 'country',
  // German
  'bestell\\p{L}*', 'auftrag\\p{L}*', 'rechnung\\p{L}*', 'kunde\\p{L}*', 'sendung\\p{L}*', 'paket\\p{L}*', 'liefer\\p{L}*',
  'zustell\\p{L}*', 'versand\\p{L}*', 'telefon\\p{L}*', 'plz', 'postleitzahl', 'postfach', 'packstation', 'adresse', 'anschrift',
  'hrb', 'hra', 'amtsgericht', 'handelsregister', 'ust\\p{L}*', 'steuer\\p{L}*', 'konto', 'blz', 'summe', 'gesamt\\p{L}*',
  'preis', 'betrag', 'mwst\\.?', 'artikel', 'menge', 'zimmer', 'buchung\\p{L}*',
  // French, Spanish, Portuguese, Italian, Dutch
  'commande', 'facture', 'suivi', 'colis', 'livraison', 'téléphone', 'tél\\.?', 'siret', 'siren', 'rcs', 'tva', 'orias', 'prix',
  'montant', 'ttc', 'cedex', 'bp', 'pedidos?', 'factura', 'seguimiento', 'envío', 'teléfono', 'móvil', 'cif', 'nif', 'nie',
  'precio', 'importe', 'iva', 'cp', 'apartado', 'piso', 'nave', 'talla', 'dirección', 'fatura', 'rastreamento', 'rastreio',
  'telefone', 'celular', 'cnpj', 'cpf', 'preço', 'valor', 'frete', 'cep', 'sac', 'apto', 'endereço', 'entrega', 'ordine',
  'fattura', 'spedizione', 'telefono', 'p\\.\\s?iva', 'partita', 'prezzo', 'totale', 'cap', 'indirizzo', 'fiscale',
  'bestelling', 'factuur', 'kvk', 'btw', 'telefoon', 'prijs', 'totaal', 'adres',
];
const OTHER_SIGNS = [
  '订单', '单号', '运单', '快递', '物流', '电话', '客服', '热线', '邮编', '邮政编码', '地址', '金额', '价格', '实付', '手机', '〒',
  '電話', '郵便番号', '注文', '番号', '金額', '住所', '伝票',
];
export const KEYWORD_RE = new RegExp(
  [
    // Whole words (the boundaries outside the alternation, so that the engine can skip ahead on the first letter).
    `${L}(?:(${NEUTRAL_WORDS.join('|')})|(${CODE_WORDS.join('|')})|(${PROMO_WORDS.join('|')})|(${OTHER_WORDS.join('|')}))${R}`,
    // "code" and "nummer" also end compounds (Bestätigungscode, verificatiecode, Kundennummer); for "code" the word before it decides (CODE_NOT_PREFIXES).
    `(code[sn]?)${R}`,
    `(nummern?)${R}`,
    // Scripts without spaces between words.
    `(${CODE_SIGNS.join('|')})`,
    `(${PROMO_SIGNS.join('|')})`,
    `(${OTHER_SIGNS.join('|')})`,
  ].join('|'),
  'giu',
);
/** Words that make "…code" something else: "barcode", "Gutscheincode", "postcode", "decode". */
export const CODE_NOT_PREFIXES = new Set(['uni', 'en', 'de', 'bar', 'post', 'zip', 'qr', 'promo', 'gutschein', 'rabatt', 'aktions', 'geschenk', 'source', 'area', 'pin']);
/** Labels that, next to a code word, make it theirs: "order confirmation", "tracking code", "confirmation number", "código postal". */
export const QUALIFIER_RE =
  /^(?:order|booking|reservation|tracking|track|ship|zip|postal|postcode|sort|approval|authori|numbers?$|no\.|nr|n[°º]|núm|num|nummer|pedido|commande|bestell|sendung|auftrag|rechnung|invoice|fiscale|case|ticket|item|sku|ref|card|area|country|iban|bic|cep|cp$|plz|suivi|seguimiento|rastre|serial|model|version|邮|订单|单号|运单)/iu;
/** What may stand between a qualifying label and its code word: "número de confirmación". */
export const QUALIFIES_RE = /^[\s\-–]*(?:(?:de|du|des|da|do|di|del|of|der|van|的)\s+)?$/iu;
