"""Given names common across the world's languages, for names written in lowercase and
names that open a sentence.

Chat drops capitals ("went to nandos with ciara", "my cousin sara", "ravi and deepika are
hosting"), and the rules read a name by its capital. A lowercase word that is one of these
is read as a person's name wherever it stands. A sentence's first word has a capital
whatever it is, so the rules read it as a name only with a cue or when the scope knows
it; one of these is read there with neither ("Deepika always wins"). Left out: every
given name that is also an English word ("will", "mark", "grace", "hope", "rose", "jack",
"max", "tom", "peter", "harry", "mike", "victor", "carol", "josh", "tony", "karen",
"henry", "joey"), the months and seasons ("may", "june", "summer"), and short forms that
are words elsewhere ("can", "lei", "bo", "ren"). Normal forms
(:func:`engram.core.graph.names.normalise`). Written from general knowledge, not read off
any labelled text.
"""

from __future__ import annotations

_NAMES = """
ali mohammed muhammad mohamed mohammad ahmed ahmad omar umar hassan hussein yusuf youssef
ibrahim khalid tariq bilal jamal farouk karim kareem rashid samir nabil walid faisal
hamza idris ismail mustafa mahmoud salma fatima aisha ayesha zainab layla leila noura
nour mariam maryam yasmin yasmine amina rania huda samira khadija nadia dina lina reem
sara sarah ravi deepika priya arjun rahul rohan vikram sanjay anil sunil amit ankit
aditya ananya aarav vivek nikhil kiran pooja neha sneha kavya divya anjali aishwarya
lakshmi meera shreya isha riya naveen ishaan farhan imran asif ritu sunita vijay ajay
suresh ramesh ganesh manish deepak pradeep rajesh sandeep harpreet gurpreet simran
jaspreet manpreet wei mei ming xin jing hiroshi kenji takeshi haruki yuki sakura aiko
akira kaito jisoo jiwoo seojun linh minh thanh trang huong niamh aoife siobhan ciara
ciaran ciarán cormac declan eoin saoirse sinead sinéad oisin oisín padraig aisling
roisin róisín orla caoimhe cathal fionn seamus sean eamon ronan conor connor liam aidan
brendan colm donal fergal grainne maeve niall cian tadhg mairead beatriz joao joão
maria mariana sofia sofía lucia lucía carmen pablo diego javier alejandro alejandra
carlos juan jose josé luis miguel pedro rafael sergio andres andrés fernando lucas
mateo gabriel gabriela camila valentina isabella isabel ana paula marta elena laura
raquel ines inês francisco antonio manuel jorge ricardo eduardo gonzalo alvaro álvaro
ignacio rodrigo enzo thiago tiago gustavo bruno marco matteo giulia giovanni francesca
chiara alessandro lorenzo luca federica valeria daniela fernanda catalina ximena renata
james john michael david daniel thomas matthew andrew joshua christopher jonathan nathan
ethan noah oliver elijah benjamin samuel alexander william joseph anthony steven kevin
brian jason justin ryan eric adam aaron kyle tyler brandon jacob logan dylan evan ian
patrick timothy jeremy jeffrey gregory richard robert charles george edward emily
emma olivia sophia sophie ava mia abigail elizabeth charlotte amelia evelyn jessica
jennifer ashley amanda stephanie nicole melissa rebecca rachel hannah anna katie lucy
chloe zoe megan lauren alice clara julia nora ella leah natalie caroline gina joanna
jolene deborah audrey melanie samantha catherine katherine kathryn margaret susan linda
barbara nancy lisa betty helen sandra donna michelle kimberly amy angela brenda
annie jane janet diana julie kelly christina lindsay heidi tina tracy wendy nina
vanessa monica erica erin jenny jenna tim sam dave steve chris alex jake
luke nate andy danny johnny kenny jon jim joe ben dan ted fred greg jeff ron zach
calvin emeka chidi chinedu ngozi adaeze funmi segun tolu tunde kemi bola yemi femi ayo
wanjiru kamau otieno achieng amara kwame kofi abena thabo sipho lerato nomvula zanele
themba jakub marek piotr tomasz katarzyna agnieszka magdalena andriy oksana olena
dmitri dmitry sergei ivan olga natasha anastasia irina svetlana tatiana vladimir nikolai
pavel milena anouk sanne lars sven ingrid astrid freya nils erik anders johan henrik
mikko aino mehmet emre elif zeynep ayse ayşe fatma burak deniz ozan reza mehdi parisa
shirin navid nasrin
"""
# More given names, by language (English, Irish, Scottish and Welsh, French, German, Dutch,
# Nordic, Italian, Spanish, Portuguese, Slavic, Hungarian, Romanian, Balkan, Greek, Baltic,
# Turkish, Armenian and Georgian, Arabic, Persian, Hebrew, South Asian, Chinese, Japanese,
# Korean, South-East Asian and African), written from general knowledge, then checked:
# every one that is a lowercase word of Debian's English word lists (wamerican, wbritish:
# "dawn", "holly", "frank", "per", "can") or a place or an organisation every reader knows
# left out, and by hand the names of places (Sofia, Milan, Austin, Madison, Chelsea,
# Lourdes, Regina, Kerry), of brands, products and awards (Mercedes, Alexa, Heinz, Milo,
# Oscar, Margaux), words in other tongues that chat uses (kajal, hai, mai, ola)
# and short forms that are acronyms or slang (ama, avi, lan, hoa, ute).
_MORE = """
aaliyah abby adrian adriana aiden alana alexis alicia alison allison alyssa andrea
angelina anita annabelle annette antoinette ariana arianna ashton aubrey avery bailey
barry becky bella bernard bethany beverly bianca blake bradley brady brett brianna
bridget brody brooke bryan bryce caleb cameron carla carly casey cassandra cassidy
cecilia charlie cheryl christine cindy claire clarissa claudia cody colby colin corey
courtney craig cristina cynthia damian damon dana danielle darius darren debbie delaney
denise derek desmond devin diane dominic donald donovan doris dorothy douglas duncan
dustin dwayne edgar edith edwin eileen elaine eleanor eli elise eliza ellen ellie elliot
elliott eloise elsa emilia emilio emmett ernest esther ethel evangeline everett fiona
frances francis franklin gabriella gabrielle gavin genevieve gerald gertrude gillian
giselle gladys glenn gloria gordon gwen gwendolyn haley harold harrison hayden howard
hugo imogen irene isaac isabelle isaiah jackie jacqueline jaden jamie janice jared
jayden jeanette jeanne jeremiah jerome jesse jessie jillian joan joanne jocelyn jodie
joel joey josephine joyce judith judy julian juliana julianne juliet justine kaitlyn
kara karl kate katelyn katrina kayla keith kendall kendra kennedy kenneth kieran kirsten
kristen kristin kylie lawrence leonard leslie lillian lindsey lionel louis louise lydia
lynn mackenzie madeline maggie malcolm mallory marcus marian marianne marilyn marion
marissa marjorie marlene martha marvin matilda maureen maxwell melinda meredith miranda
miriam molly morgan nadine naomi neil nicholas nicola nolan norman owen paige pamela
patricia pauline penelope percy phyllis priscilla quentin quinn rachael raymond reagan
rebekah reginald renee rhonda riley rita roberta rodney ronald rosalind ross roxanne
russell ruth ryder sabrina sadie scarlett serena seth sharon shawn sheila shelby shirley
sidney simon skylar sonia spencer stacy stanley stella stuart sylvia tabitha tamara
tanya tara taylor teresa theodore theresa tiffany toby todd travis trevor tristan
valerie vernon veronica vicky vincent vivian wallace walter wayne wesley whitney willard
wilson winston yvonne zachary zara zoey aodhan bronagh clodagh darragh deirdre dermot
eamonn eilish eimear eoghan fiachra finbar finn fionnuala padraic ruairi ruaidhri sorcha
ailsa alasdair alistair callum catriona eilidh euan fraser hamish iain isla kirsty
lachlan mhairi morag murdo rhona seonaid struan aled bethan bryn carys cerys dafydd
eirlys emrys gareth geraint glyn gwyneth huw ieuan iolo llinos llewellyn lowri meinir
nia owain rhian rhodri rhys sian siân tegan adele adèle agathe alain amandine amelie
amélie anais anaïs antoine apolline aurelie aurélie baptiste benoit benoît bertrand
brigitte camille capucine celine céline chantal christophe colette corentin damien
delphine didier dominique elodie élodie emilie émilie etienne étienne fabien fabrice
florian francois françois frederic frédéric gaelle gaëlle gaspard geneviève ghislaine
gilles guillaume helene hélène herve hervé jacques jean jérôme julien laetitia loic loïc
lucie manon mathieu mathilde matthieu maxime mélanie michel nathalie nicolas noemie
noémie oceane océane olivier pascal pascale patrice pierre raphael raphaël remi rémi
romain sandrine sebastien sébastien severine séverine solene solène stephane stéphane
sylvain sylvie theo théo thibault thierry valentin valérie veronique véronique yann
yannick yves zoé andreas anja anke annika benedikt bernd birgit britta christoph
cornelia dagmar detlef elke fabian felix franziska friedrich gabriele georg gerd gerhard
gisela gudrun gunter günter hannes hans heike heinrich helga helmut hendrik horst ilse
ingo jana jens joachim jochen johannes jonas jorg jörg jurgen jürgen karin karsten
katharina katrin kerstin klaus konrad kurt lena leonie lukas maik manfred mareike markus
matthias maximilian monika niklas norbert olaf paul rainer ralf reinhard renate rolf
rudiger rüdiger sabine sascha silke simone sonja stefan steffen susanne swen thorsten
tobias torsten ulrich ulrike ursula uta uwe volker werner wolfgang anneke arjen bart
bram daan eline eva femke fleur gerrit gijs hendrika henk jaap jeroen joost joris jurre
kees koen lieke lotte luuk maarten marijke martijn mees merel niels noor pieter rik roel
ruud siebe sjoerd stijn teun thijs tijn wouter wim willem yara agnetha anneli arne arvid
axel bjorn björn bengt birgitta egil eirik elin emil espen frida gunnar gustav halvard
hanna hedda helle hilde idun ingeborg ingvar kari karoline kasper kjell knut kristian
lasse leif linnea liv magnus malin marit mette mikael oddvar olav oskar ragnar rasmus
runa sigrid silje solveig stig sune svein terje thor tove trond ulf ulla vilde viggo
aleksi antti eero elina hannele heikki ilkka jari juha jukka kalle kirsi lauri leena
marjut matti mika minna niko olli paivi päivi pekka petri riikka sami sanna satu seppo
taina teemu timo tuomas tuuli veera ville aron bjarni gunnhildur halldor halldór jón
sigrun sigurdur sigurður thora alberto alessia alessio angelo antonella beatrice
benedetta carlo cesare claudio daniele dario davide eleonora emanuele enrico fabio
fabrizio federico filippo franco gianluca gianni giorgio giulio giuseppe graziella
ilaria leonardo letizia luciano luigi manuela marcello mario massimo mattia maurizio
michela michele nicolo niccolò paola paolo pietro raffaele riccardo roberto rosa
salvatore silvia simona stefania stefano tommaso vincenzo vittoria agustin agustín alba
alfonso alfredo amparo araceli belen belén cristobal cristóbal dolores enrique esperanza
esteban felipe gerardo graciela guillermo jaime joaquin joaquín juana julio leticia
lorena luisa marcela marisol milagros mónica nerea nicolás paloma pilar ramon ramón raul
raúl rocio rocío sebastian sebastián soledad tomas tomás verónica vicente yolanda
adriano afonso bernardo caio cecília conceicao conceição cristiano davi diogo duarte
eduarda fabiana fabiola flavia flávia goncalo gonçalo guilherme heitor helena henrique
joana júlia leandro letícia luana marcelo marcia márcia matheus murilo nuno otavio
otávio paulo rafaela renato rui sandro simao simão thaís thais vinicius vinícius vitor
vitória agata aleksander aleksandra alicja andrzej anka antoni bartosz beata bogdan
bozena bożena czeslaw dariusz dawid dominika dorota elzbieta elżbieta ewa ewelina filip
grazyna grażyna grzegorz halina iwona izabela jacek jadwiga janusz jaroslaw jarosław
jerzy jolanta justyna kacper kamil kamila karol karolina kasia kinga krystyna krzysztof
krzysiek lech lukasz łukasz maciej malgorzata małgorzata marcin mariusz mateusz michal
michał mikolaj mikołaj natalia oliwia paulina pawel paweł przemek przemyslaw radek rafal
rafał stanislaw stanisław szymon tadeusz urszula wanda weronika wiktor wiktoria witold
wojciech zbigniew zofia zuzanna adela bohdan bohumil eliska eliška frantisek františek
hana jaromir jindrich jiri jiří jitka katerina kateřina ladislav lenka libor marketa
markéta miloslav miroslav ondrej ondřej petr radka sarka šárka stepan štěpán tereza
vaclav václav vojtech vojtěch zdenek zdeněk zuzana andras andrás attila balazs balázs
bence csaba dora dóra eszter gabor gábor gergely gyorgy györgy ildiko ildikó istvan
istván janos jános judit katalin krisztina laszlo lászló levente marton márton mihaly
mihály orsolya réka reka szabolcs tamas tamás zoltan zoltán zsofia zsófia zsuzsanna
alexandru andreea catalin cătălin cristian dorin gheorghe ioana ionut ionuț iulia
loredana mihai mihaela mircea nicoleta ovidiu radu raluca sorin ștefan teodora vasile
viorel aleksandar bojan borislav branko dejan dragan dusan dušan goran ivana jelena
jovana katarina ljiljana luka marija marko milica milos miloš mladen natasa nataša
nebojsa nemanja nenad nikola predrag sasa saša slobodan snezana snežana srdjan vesna
zoran zeljko željko anamarija domagoj dubravka hrvoje igor josip kresimir krešimir matej
mirela mislav tomislav vedran zvonimir adnan amra edin emina haris jasmin kenan lejla
mirza nermin senad alen blaz blaž jure klemen mojca nejc primoz primož spela špela ziga
žiga boyan dimitar georgi hristo ivaylo kalin krasimir lyubomir nikolay plamen radoslav
rumen stoyan svetla tsvetan vasil yordan alexandros anastasios angeliki apostolos
athanasios christos dimitra dimitrios eleni evangelia fotini georgios giannis ioannis
kalliopi konstantinos kostas lefteris nikos panagiotis panos paraskevi spyros stavros
stelios theodora thanos vasilis vassilis yiannis aleksei alexei alexey alina alyona
anatoly andrei andrey anton arkady artem artyom boris daria darya denis dmitriy egor
evgeny evgenia fedor fyodor galina gennady grigory ilya inna kirill konstantin ksenia
kseniya larisa leonid lyudmila maksim mikhail nadezhda nikita oleg polina ruslan semyon
sofya stanislav taisiya timur valery varvara vasily viktor vitaly vladislav vyacheslav
yaroslav yekaterina yelena yevgeny yulia yuri zhanna bohdana dmytro halyna hryhoriy
iryna kateryna khrystyna mykola mykhailo nazar oleksandr oleksii oleksiy olha petro
solomiia taras vasyl volodymyr yaroslava yuliia yurii aliaksandr siarhei uladzimir
ainars andris arturs dace gatis ilze inese janis jānis kristaps laila raimonds sandis
uldis zane aurimas dovydas egle eglė gediminas giedre giedrė ieva jurgita justas
kestutis kęstutis mantas marius migle milda mindaugas paulius ruta rūta saulius vaida
vilius vytautas aivar kadri kaja karmen kertu liis merike priit raivo reet siim tiit
toomas triin urmas ahmet alper arda aslan ayhan aylin aysel aysun baris bayram berk
berkay bulent bülent burcu cagla çağla cem cemal ceren derya dilek ebru ece emel emine
engin esra eda erdem ergun fatih ferhat filiz gamze gizem gokhan gökhan gul gül gulsen
gülşen hakan hande hatice hulya hülya irem kaan kemal koray mert merve metin murat nazli
nazlı nihat nur ozge özge ozlem özlem onur orhan pinar pınar recep sedat selin selim
serkan sevgi sibel sinan songul tolga tugba tuğba tuncay ufuk ugur uğur umut volkan
yasemin yavuz zehra aram anahit armen arpi gor hasmik hovhannes lilit mher narek nare
shushan tigran vardan giorgi irakli levan lasha nino nikoloz salome tamar tamuna zurab
abdallah abdullah abdul abdulrahman adel ahlam akram alaa amal amani amira ammar anas
asma ayman aziz bashir basma bassam dalia fadi farida fawzi ghada habib hadi hala hamid
hanan haneen hazem hiba hisham iman imad jamila jawad kamal khaled lamia lubna majid
malak malik mansour marwa mona munir murad nadim naji najib najla nasser nawal nizar
osama rami rana rasha riad rima rula saad sabah safa salah saleh salim samia sana sawsan
shadi sherif sulaiman suleiman wael waleed wafa yasser yasmina yazan yousef zaid zakaria
ziad abbas afsaneh arash ardalan armin azadeh babak bahram behnaz behrouz bijan dariush
elham farhad farnaz farzaneh fereshteh ghazal golnaz hamed hossein kaveh kian kourosh
laleh leyla mahnaz mahsa masoud mina mitra mojgan nader nasim negar niloufar omid pardis
payam pedram pegah roya saeed sahar sanaz sepideh shahram shahla shima soheil sohrab
soraya taraneh yasaman ziba avraham ayelet eitan elad erez gili hadas hila itai itamar
lior limor maya meir moshe nadav naama noa noam ofer ofir omer oren ori rivka ronit ruti
shai shira shlomo yael yaakov yehuda yitzhak yoav yonatan yosef ziv aakash aarti abhay
abhishek aditi akash akshay alok amar amitabh amrita anand anika ankita anupam anushka
aparna archana arun aruna arvind asha ashish ashok aslam atul ayush bhavna chandra
chetan darshan deepa devika dhruv dinesh gaurav gautam geeta girish gita gopal govind
hari harish harsha hemant indira jaya jayant jyoti kabir kamala kapil karan kartik
kavita keshav kishore krishna kriti kunal lalita madhav madhu mahesh manisha manoj meena
mohan mohit mukesh nandini naresh neelam neeraj nirmala nisha nitin pallavi pankaj parth
prakash pranav prasad pratik praveen preeti priyanka radha raghav rajat rajiv rakesh
rani ranjit rashmi ravindra rekha rohit rupa sachin sahil sakshi sangeeta sanjana
santosh saroj seema shalini shankar sharad shikha shilpa shivani shruti shyam siddharth
smita sonali sourav suman sumit sushila swati tanvi tarun uday uma usha varun vidya
vikas vinay vinod vishal yash yogesh aravind balaji bhaskar gopinath ilango jagadeesh
kannan karthik lakshman murali muthu nagaraj natarajan padma palani prabhu raghu rajan
ramya ranjani saravanan selvi senthil shanthi shanthini siva sundar thilak vasanth
venkat vignesh aniket amol atharva ketaki mrunal omkar pratiksha sayali shubham tejas
vaibhav abhijit anirban arijit debashish indrani joydeep mousumi partha rituparna sayan
soumya sudipta supriya tanushree amandeep baljit harjit jasvinder kuldeep navdeep
paramjit rajinder ranbir sukhdeep sukhwinder tejinder hardik jignesh kinjal nirav parul
pinal urvashi ajith anoop bindu biju deepthi jinu lijo manju nimmi rajeev reshma sajan
shibu sreeja suja aamir adeel afzal ayaan fawad irfan junaid kamran mahira mehwish
nabeel nadeem naila rabia rizwan saba sadia saima shahid shazia sohail tahir umair usman
waqas yasir zubair abir anisur farzana habibur jahangir kamrul mahmuda mizanur rafiq
rahim rahima rubina shafiq shahana tanvir chaminda dilani dilshan kasun kumari lahiru
nadeesha nimal priyantha ruwan sanjeewa thilini upul anjana bishnu dipak laxmi nabin
pramila prem rajendra sabina sagar sarita shova sujata sushil anqi bohan chenxi chunhua
guoqiang haoran haoyu hongwei huiling jiahao jiahui jiaming jianguo jianhua jiayi jingyi
junjie junwei kaiwen liwei meiling mingyu qiang ruoxi shuang siyu tianyi weijie weiming
wenjing xiaohong xiaoming xiaoyu xinyi xinyu yifan yiming yuhang yuxuan zhiwei zihan
zixuan zhihao ziyi akane akemi akihiro akiko aoi asuka ayaka ayako ayumi chiaki chihiro
chika daichi daiki daisuke emi eri fumiko haruka haruto hayato hideki hikari hina hinata
hiroki hiromi hitomi hotaru ichiro kana kanako kaori kaoru kazuki kazuya keiko kenta
kota kyoko makoto mami masaki masako masato mayu megumi midori miki minami misaki miyu
momoka naoki naoko natsuki noriko reina riko rina ryo ryota ryusei satoshi sayaka shinji
shota takashi takumi tomoko tomomi tsubasa wataru yoko yoshiko yua yui yuko yumi yuna
yusuke yuto yuuki bora chaewon dahye dohyun dongho dongmin eunbi eunji eunseo gayoung
haeun hajin hyejin hyemin hyojin hyunjin hyunwoo jaehyun jaewon jieun jihoon jihye jimin
jinwoo jiwon jiyeon jiyoung junho junseo kyungsoo minho minji minjun minseo minsu
seoyeon seungmin sohee soyeon subin sujin sumin sungmin taeyang yejin yerin yoona
youngho anh binh chau cuong giang hanh hieu hoang huy khanh khoa ngoc nhung phuong phuc
quang quynh thao thuy tien trinh trung tuan tuyet vinh xuan anong arthit boonsri chaiya
kanya kittisak malee niran pranee siriporn somchai somsak sunee supaporn thida wanida
agus ayu bambang budi dewi dian fitri hendra indah intan joko kurniawan lestari putri
rudi siti wahyu wayan yanti yudi aishah azlan farah hafiz hidayah nurul syafiq zulkifli
amihan bayani dalisay divina jomar kristine lorna mariel maricel marites rodel rowena
wilfredo abimbola adebayo adeola adewale adaobi ayodele babatunde bisi bukola chiamaka
chibueze chidinma chinonso chioma chukwuemeka damilola ebuka ekene folake funke
funmilayo gbenga ifeoma ifeanyi ijeoma ikechukwu kehinde kelechi lanre morenike nkechi
nnamdi obinna ogechi oluwaseun olumide onyeka osagie temitope titilayo tobi tosin
uchenna uche yetunde abubakar aminu danjuma garba hadiza halima musa nasiru sani yakubu
adwoa afua akosua akua efua esi kojo kwabena kwaku kwasi kwesi yaa akinyi atieno auma
baraka chebet jelimo kiprop kipchoge mumbi muthoni mwangi nafula njeri njoroge nyokabi
odhiambo ouma wambui wanjiku wekesa imani juma neema rehema zawadi abebe alemayehu almaz
amanuel dawit desta fikru genet hailu kebede lemlem mekdes selam tadesse tesfaye tigist
yonas abdi abdirahman hodan hawo ilhan khadar ladan nimco sahra ayanda bongani buhle
lindiwe lwazi mandla nandi nkosana nokuthula sibusiso sizwe thandeka thandiwe zodwa zola
busisiwe kagiso karabo katlego lebogang mpho neo palesa refilwe tebogo tshepo chipo
farai kudzai nyasha rufaro tafadzwa tatenda tendai
"""
GIVEN = frozenset(_NAMES.split()) | frozenset(_MORE.split())
"""Every listed given name's normal form."""


def opens(name: str) -> bool:
    """Whether a name in its normal form opens with one of these: a person's name every
    reader knows, whatever the words after it ("naveen kumar", "rebecca hall")."""
    first = name.split(maxsplit=1)
    return bool(first) and first[0] in GIVEN
